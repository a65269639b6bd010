/** Placeholder: being built (issue 15). */
export function RememberedPage() {
  return <h1>RememberedPage</h1>;
}
