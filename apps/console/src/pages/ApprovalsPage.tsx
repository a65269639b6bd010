/** Placeholder: being built (issue 15). */
export function ApprovalsPage() {
  return <h1>ApprovalsPage</h1>;
}
