/**
 * A URL an agent or admin supplied, to show as a link or image only when it is `https:`
 * (or `http:` on loopback): never `javascript:`, `data:` or anything else.
 */
export function safeUrl(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol === 'https:') return url.href;
  const loopback =
    url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  return url.protocol === 'http:' && loopback ? url.href : undefined;
}
