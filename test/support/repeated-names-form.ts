/** The token endpoint's body limit (256 KiB). */
export const TOKEN_BODY_LIMIT = 256 * 1024;

/**
 * `grant_type=client_credentials` and then distinct short names, each sent
 * twice, up to just under the 256 KiB cap (about 30,000 names). A parser that looks up every
 * name in a list of the names seen so far does about half a billion comparisons on it.
 * Used by test/http/parser-complexity.e2e-spec.ts (the answers) and bench/parser.measure.ts (the time).
 */
export function repeatedNamesForm(): string {
  const parts = ['grant_type=client_credentials'];
  let size = parts[0]?.length ?? 0;
  for (let i = 0; ; i += 1) {
    const pair = `&${i.toString(36)}=&${i.toString(36)}=`;
    if (size + pair.length > TOKEN_BODY_LIMIT) break;
    parts.push(pair);
    size += pair.length;
  }
  return parts.join('');
}
