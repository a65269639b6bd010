/** Placeholder: being built (issue 15). */
export function ConnectionsPage() {
  return <h1>ConnectionsPage</h1>;
}
