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

export function readConsentParams(search: string, agentId?: string): ConsentParams {
  const params = new URLSearchParams(search);
  const token = params.get('session_token');
  const error = params.get('error');
  return {
    sessionToken:
      token !== null && token.length > 0
        ? token
        : agentId !== undefined
          ? (storedRequest(agentId)?.sessionToken ?? null)
          : null,
    connectedServiceId: params.get('success') === 'true' ? params.get('service_id') : null,
    connectFailure:
      error !== null && error.length > 0
        ? { serviceId: params.get('service_id'), code: isKnownCallbackError(error) ? error : null }
        : null,
  };
}

/**
 * Reads the consent page's parameters once, then removes them from the address bar (React Router's
 * replace is `history.replaceState`): a session_token must not stay in the history or be bookmarked.
 * The values stay in React state for the page's lifetime; a pending request is also kept for the
 * tab (pending-request.ts), so Back to this address shows it again.
 */
export function useConsentParams(agentId: string): [ConsentParams, (next: ConsentParams) => void] {
  const location = useLocation();
  const navigate = useNavigate();
  const [params, setParams] = useState<ConsentParams>(() => readConsentParams(location.search, agentId));

  useEffect(() => {
    const rest = new URLSearchParams(location.search);
    if (!READ_ONCE.some((name) => rest.has(name))) return;
    for (const name of READ_ONCE) rest.delete(name);
    const search = rest.toString();
    void navigate(
      { pathname: location.pathname, search: search.length > 0 ? `?${search}` : '', hash: location.hash },
      { replace: true },
    );
  }, [location.pathname, location.search, location.hash, navigate]);

  return [params, setParams];
}
