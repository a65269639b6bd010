/**
 * A 409 in words: what could not be done and why, with what to do first ("This MCP server cannot be deleted" /
 * "while the permission set 'Calendar' names it. Remove it from that set first.").
 */
export function ConflictNotice(props: { readonly what: string; readonly why: string }) {
  const { what, why } = props;
  return (
    <div className="notice warning conflict" role="alert">
      <strong>{what}</strong> {why}
    </div>
  );
}
