import { useSyncExternalStore } from 'react';

/**
 * A consent request the person has not answered yet, kept for this browser tab
 * (`sessionStorage`: per tab, gone when the tab closes) so that leaving the consent page (another
 * tab of the console, Back, a failed Connect) does not lose it: the consent page reads it back,
 * and the other pages offer the way back to it. It holds only what the consent page's own address
 * carried (the `session_token`) and what the page showed (the agent's name, the request's expiry).
 * It is forgotten once the request is answered (Allow, Deny), found answered or expired, or
 * dropped by the person. A request that expired on the broker's side is not silently dropped:
 * the consent page sends its token once more and says the request expired and the agent must start
 * again (the broker answers `session_expired`); only then is it forgotten.
 */
export interface PendingRequest {
  readonly agentId: string;
  readonly agentName: string;
  readonly sessionToken: string;
  /**
   * When the broker stops accepting it (ISO 8601), if it said: by this browser's clock (the time
   * the page read the request plus the `expires_in` the broker gave), so a clock that is off
   * neither keeps nor drops it wrongly.
   */
  readonly expiresAt: string | null;
}

const PREFIX = 'broker.consent-request.';
const CHANGED = 'broker:consent-requests';

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    // Storage disabled: the request lives only as long as the page, as before.
    return null;
  }
}

function parse(agentId: string, text: string | null): PendingRequest | null {
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as Partial<PendingRequest>;
    if (
      typeof value.sessionToken !== 'string' ||
      value.sessionToken.length === 0 ||
      typeof value.agentName !== 'string'
    )
      return null;
    return {
      agentId,
      agentName: value.agentName,
      sessionToken: value.sessionToken,
      expiresAt: typeof value.expiresAt === 'string' ? value.expiresAt : null,
    };
  } catch {
    return null;
  }
}

/** The request kept for the agent, expired or not (the consent page lets the broker say). */
export function storedRequest(agentId: string): PendingRequest | null {
  return parse(agentId, storage()?.getItem(PREFIX + agentId) ?? null);
}

export function rememberRequest(request: PendingRequest): void {
  const store = storage();
  if (store === null) return;
  const text = JSON.stringify({
    agentName: request.agentName,
    sessionToken: request.sessionToken,
    expiresAt: request.expiresAt,
  });
  if (store.getItem(PREFIX + request.agentId) === text) return;
  try {
    store.setItem(PREFIX + request.agentId, text);
  } catch {
    return; // quota: the request is kept by the page only
  }
  window.dispatchEvent(new Event(CHANGED));
}

export function forgetRequest(agentId: string): void {
  const store = storage();
  if (store === null || store.getItem(PREFIX + agentId) === null) return;
  store.removeItem(PREFIX + agentId);
  window.dispatchEvent(new Event(CHANGED));
}

/** Whether the request may still be answered, by the expiry the broker gave. */
export function isLive(request: PendingRequest, now: number): boolean {
  return request.expiresAt === null || Date.parse(request.expiresAt) > now;
}

let snapshot: { key: string; value: PendingRequest[] } = { key: '', value: [] };

/** Every request kept in this tab, in a stable array while nothing changed (for useSyncExternalStore). */
function readAll(): PendingRequest[] {
  const store = storage();
  const entries: [string, string][] = [];
  for (let i = 0; store !== null && i < store.length; i++) {
    const key = store.key(i);
    if (key?.startsWith(PREFIX)) entries.push([key.slice(PREFIX.length), store.getItem(key) ?? '']);
  }
  entries.sort(([a], [b]) => a.localeCompare(b));
  const key = JSON.stringify(entries);
  if (key !== snapshot.key)
    snapshot = {
      key,
      value: entries.map(([agentId, text]) => parse(agentId, text)).filter((r): r is PendingRequest => r !== null),
    };
  return snapshot.value;
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener(CHANGED, onChange);
  return () => window.removeEventListener(CHANGED, onChange);
}

/** The requests waiting for the person in this tab (expired ones included: filter with isLive). */
export function usePendingRequests(): PendingRequest[] {
  return useSyncExternalStore(subscribe, readAll);
}
