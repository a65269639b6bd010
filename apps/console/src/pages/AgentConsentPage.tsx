/** Placeholder: being built (issue 15). */
export function AgentConsentPage() {
  return <h1>AgentConsentPage</h1>;
}
