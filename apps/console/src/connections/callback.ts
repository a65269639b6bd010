/**
 * What the third-party callback said through this page's query. Anyone can link here with any
 * query, so only a code the console knows is kept (null: another one), never the
 * `error_description`: the page says only the console's own words.
 */
export type CallbackResult =
  { kind: 'success'; serviceId: string | null } | { kind: 'error'; code: string | null; serviceId: string | null };

/** The query parameters the callback adds, removed from the address bar once read. */
export const CALLBACK_PARAMS = ['success', 'service_id', 'error', 'error_description'] as const;

export function readCallback(params: URLSearchParams): CallbackResult | null {
  const error = params.get('error');
  if (error !== null && error.length > 0)
    return { kind: 'error', code: isKnownCallbackError(error) ? error : null, serviceId: params.get('service_id') };
  if (params.get('success') === 'true') return { kind: 'success', serviceId: params.get('service_id') };
  return null;
}

/**
 * The broker's callback codes (README "Third-party connections and the token vault") and the
 * RFC 6749 §4.1.2.1 codes a provider answers with, in words; `provider` names the service
 * ("Mail") or is "The provider". The four ways a connection fails are told apart: the person
 * cancelled (`access_denied`), the provider refused (`token_exchange_failed`), the provider is
 * unreachable (`provider_unreachable`), the broker failed (`broker_error`).
 */
const MEANING: Record<string, (provider: string) => string> = {
  invalid_state: () => 'The connection link was invalid or had expired. Start connecting again from this page.',
  forbidden: () => 'The connection was started by someone else. Start connecting again from this page.',
  service_id_mismatch: () => 'The provider answered for a different service. Start connecting again from this page.',
  access_denied: (p) =>
    `The connection was cancelled at ${p === 'The provider' ? 'the provider' : p}, or access was not granted there. Nothing was stored; you can connect again.`,
  token_exchange_failed: (p) =>
    `${p} refused to complete the connection. Nothing was stored. Try again; if it keeps failing, ask your administrator.`,
  provider_unreachable: (p) =>
    `${p} could not be reached: it may be down or unreachable from the broker. Nothing was stored; try again later.`,
  broker_error: () =>
    'The broker could not complete the connection because of a problem on its side. Nothing was stored. Try again; if it keeps failing, ask your administrator.',
  invalid_request: (p) => `${p} reported an invalid request. Try again; if it keeps failing, ask your administrator.`,
  unauthorized_client: (p) => `${p} does not allow the broker to connect this way. Ask your administrator.`,
  unsupported_response_type: (p) => `${p} does not support how the broker connects. Ask your administrator.`,
  invalid_scope: (p) => `${p} refused the permissions the broker asked for. Ask your administrator.`,
  server_error: (p) => `${p} had a problem. Nothing was stored; try connecting again later.`,
  temporarily_unavailable: (p) =>
    `${p} is busy or down for maintenance. Nothing was stored; try connecting again later.`,
};

/** Whether the console has words for a callback code (any other is not echoed). */
export function isKnownCallbackError(code: string): boolean {
  return Object.hasOwn(MEANING, code);
}

/** A known code in words, naming the service when known; any other (null) gets a general sentence. */
export function explainCallbackError(code: string | null, provider = 'The provider'): string {
  const meaning = code !== null ? MEANING[code] : undefined;
  return meaning !== undefined
    ? meaning(provider)
    : `${provider} reported an error. Nothing was stored; try connecting again.`;
}

/** Where Connect sends the browser: the broker's authorize route, coming back to this page. */
export function connectUrl(serviceId: string): string {
  const base = (import.meta.env.VITE_BROKER_URL as string | undefined) ?? '';
  const redirect = `${window.location.origin}/connections`;
  return `${base}/api/third-party/${encodeURIComponent(serviceId)}/oauth2/authorize?redirect_uri=${encodeURIComponent(redirect)}`;
}
