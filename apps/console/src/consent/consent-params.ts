import { useEffect, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { isKnownCallbackError } from '../connections/callback';
import { storedRequest } from './pending-request';

/** What the consent page takes from its address: the authorization request and a connect callback's result. */
export interface ConsentParams {
  /**
   * The `session_token` of `/oauth2/authorize`'s consent redirect, or the one this tab kept for
   * the agent (pending-request.ts: sessionStorage, until the request is answered or expired).
   */
  readonly sessionToken: string | null;
  /**
   * The address is a consent request's (it carried a `session_token`, or still carries the
   * `request` mark that replaces it): without a token then, the request is lost (answered or
   * expired in another tab, or the address opened elsewhere), and the page must not offer a
   * grant that nothing would send back to the waiting application.
   */
  readonly marked: boolean;
  /** The service a Connect started here has just connected (`success=true&service_id=…`). */
  readonly connectedServiceId: string | null;
  /**
   * A Connect started here that failed (`error=…&service_id=…`): the callback's code when the
   * console knows it (null: another one, never echoed); its `error_description` is never read.
   */
  readonly connectFailure?: { readonly serviceId: string | null; readonly code: string | null } | null;
}

/** Parameters that leave the address bar once read. */
const READ_ONCE = ['session_token', 'success', 'service_id', 'error', 'error_description'] as const;

/**
 * What stays in the address bar in place of the `session_token` (a secret): only that this address
 * was a consent request's, so that reopening it where the request is not kept says so.
 */
export const REQUEST_MARK = 'request';

/** The consent page of a request kept for this tab (the pending-request banner's link back). */
export function requestAddress(agentId: string): string {
  return `/agents/${encodeURIComponent(agentId)}?${REQUEST_MARK}=1`;
}

export function readConsentParams(search: string, agentId?: string): ConsentParams {
  const params = new URLSearchParams(search);
  const token = params.get('session_token');
  const error = params.get('error');
  const sessionToken =
    token !== null && token.length > 0
      ? token
      : agentId !== undefined
        ? (storedRequest(agentId)?.sessionToken ?? null)
        : null;
  return {
    marked: sessionToken !== null || params.has(REQUEST_MARK),
    sessionToken,
    connectedServiceId: params.get('success') === 'true' ? params.get('service_id') : null,
    connectFailure:
      error !== null && error.length > 0
        ? { serviceId: params.get('service_id'), code: isKnownCallbackError(error) ? error : null }
        : null,
  };
}

/**
 * Reads the consent page's parameters once, then removes them from the address bar (React Router's
 * replace is `history.replaceState`): a session_token must not stay in the history or be bookmarked;
 * the `request` mark stays instead while the page is a request's.
 * The values stay in React state for the page's lifetime; a pending request is also kept for the
 * tab (pending-request.ts), so Back to this address shows it again.
 */
export function useConsentParams(agentId: string): [ConsentParams, (next: ConsentParams) => void] {
  const location = useLocation();
  const navigate = useNavigate();
  const [params, setParams] = useState<ConsentParams>(() => readConsentParams(location.search, agentId));

  useEffect(() => {
    const rest = new URLSearchParams(location.search);
    const marked = rest.has(REQUEST_MARK);
    if (!READ_ONCE.some((name) => rest.has(name)) && marked === params.marked) return;
    for (const name of READ_ONCE) rest.delete(name);
    if (params.marked) rest.set(REQUEST_MARK, '1');
    else rest.delete(REQUEST_MARK);
    const search = rest.toString();
    void navigate(
      { pathname: location.pathname, search: search.length > 0 ? `?${search}` : '', hash: location.hash },
      { replace: true },
    );
  }, [location.pathname, location.search, location.hash, navigate, params.marked]);

  return [params, setParams];
}
