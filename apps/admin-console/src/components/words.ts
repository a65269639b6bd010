/**
 * `text` as a sentence: ending with a full stop unless it ends with one already, and capitalised when it starts
 * with a plain word (never a principal, an id or a URL: `alice@example.com is not…` stays as it is).
 */
export function asSentence(text: string): string {
  const trimmed = text.trim();
  const first = trimmed.split(/[\s:,]/)[0] ?? '';
  const capital = /^[a-z][a-z-]*$/.test(first) ? trimmed.charAt(0).toUpperCase() + trimmed.slice(1) : trimmed;
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}
