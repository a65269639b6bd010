/** Hosts a loopback `public_url` names: a broker in development, whose demo services serve logos over plain http. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * The console's Content-Security-Policy. Scripts and styles only from the broker's own files: no
 * inline script, no `unsafe-eval`, no inline `<style>` (React sets style properties through the CSSOM, which a policy
 * does not govern). Agent logos are admin- or CIMD-supplied `https:` images from any host, so `img-src` allows
 * `https:`; `data:` is for images the build inlines. A broker whose own `public_url` is loopback (development)
 * also allows `http://localhost:*` and `http://127.0.0.1:*` images, matching the page's `safeUrl`; CSP host sources
 * cannot name `[::1]`. Never framed (`frame-ancestors 'none'`), no plugins, no `<base>`, forms post only here.
 */
export function consoleContentSecurityPolicy(publicUrl: string): string {
  const images = ["'self'", 'https:', 'data:'];
  if (isLoopbackHost(new URL(publicUrl).hostname)) images.push('http://localhost:*', 'http://127.0.0.1:*');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${images.join(' ')}`,
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Headers of every console answer, page and asset alike: a consent page that can be framed can be clickjacked
 * (`frame-ancestors`, `X-Frame-Options`); the `session_token` in a consent URL must not leak through `Referer`;
 * nothing is sniffed into a script; another origin's window gets no handle on the page.
 */
export function consoleSecurityHeaders(publicUrl: string): Readonly<Record<string, string>> {
  return {
    'Content-Security-Policy': consoleContentSecurityPolicy(publicUrl),
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}
