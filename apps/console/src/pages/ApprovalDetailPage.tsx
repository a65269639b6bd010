/** Placeholder: being built (issue 15). */
export function ApprovalDetailPage() {
  return <h1>ApprovalDetailPage</h1>;
}
