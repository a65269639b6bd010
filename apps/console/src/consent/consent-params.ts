import { useEffect, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';

/** What the consent page takes from its address: the authorization request and a connect callback's result. */
export interface ConsentParams {
  /** The `session_token` of `/oauth2/authorize`'s consent redirect; kept in memory only, never in storage. */
  readonly sessionToken: string | null;
  /** The service a Connect started here has just connected (`success=true&service_id=…`). */
  readonly connectedServiceId: string | null;
}

/** Parameters that leave the address bar once read. */
const READ_ONCE = ['session_token', 'success', 'service_id'] as const;

export function readConsentParams(search: string): ConsentParams {
  const params = new URLSearchParams(search);
  const token = params.get('session_token');
  return {
    sessionToken: token === null || token.length === 0 ? null : token,
    connectedServiceId: params.get('success') === 'true' ? params.get('service_id') : null,
  };
}

/**
 * Reads the consent page's parameters once, then removes them from the address bar (React Router's
 * replace is `history.replaceState`): a session_token must not stay in the history or be bookmarked
 * (issue 15 item 3). The values stay in React state for the page's lifetime.
 */
export function useConsentParams(): [ConsentParams, (next: ConsentParams) => void] {
  const location = useLocation();
  const navigate = useNavigate();
  const [params, setParams] = useState<ConsentParams>(() => readConsentParams(location.search));

  useEffect(() => {
    const rest = new URLSearchParams(location.search);
    if (!READ_ONCE.some((name) => rest.has(name))) return;
    for (const name of READ_ONCE) rest.delete(name);
    const search = rest.toString();
    void navigate({ pathname: location.pathname, search: search.length > 0 ? `?${search}` : '', hash: location.hash }, { replace: true });
  }, [location.pathname, location.search, location.hash, navigate]);

  return [params, setParams];
}
