/**
 * Whether the broker named the person at least once since this page loaded (`/api/me` answered). A later 401 then
 * means the sign-in ended (reloading lets the sign-in proxy renew it); a 401 before that means the broker never
 * received an identity from the proxy (reloading changes nothing). The API's 401 is the same in both cases.
 */
let signedIn = false;

export function noteSignedIn(): void {
  signedIn = true;
}

export function hasSignedIn(): boolean {
  return signedIn;
}

/** A broker opened on this machine (development, README "Looking around without an SSO proxy"). */
export function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}
