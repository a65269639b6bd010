/**
 * What the third-party callback said through this page's query. Anyone can link here with any
 * query, so only a code the console knows is kept (null: another one), never the
 * `error_description`: the page says only the console's own words.
 */
export type CallbackResult = { kind: 'success'; serviceId: string | null } | { kind: 'error'; code: string | null };

/** The query parameters the callback adds, removed from the address bar once read. */
export const CALLBACK_PARAMS = ['success', 'service_id', 'error', 'error_description'] as const;

export function readCallback(params: URLSearchParams): CallbackResult | null {
  const error = params.get('error');
  if (error !== null && error.length > 0) return { kind: 'error', code: Object.hasOwn(MEANING, error) ? error : null };
  if (params.get('success') === 'true') return { kind: 'success', serviceId: params.get('service_id') };
  return null;
}

/** The broker's callback codes and the RFC 6749 §4.1.2.1 codes a provider answers with, in words. */
const MEANING: Record<string, string> = {
  invalid_state: 'The connection link was invalid or had expired. Start connecting again from this page.',
  forbidden: 'The connection was started by someone else. Start connecting again from this page.',
  service_id_mismatch: 'The provider answered for a different service. Start connecting again from this page.',
  access_denied: 'The provider did not grant access (perhaps you declined). Nothing was stored.',
  token_exchange_failed: 'The provider refused to complete the connection. Try again; if it keeps failing, ask your administrator.',
  invalid_request: 'The provider reported an invalid request. Try again; if it keeps failing, ask your administrator.',
  unauthorized_client: 'The provider does not allow the broker to connect this way. Ask your administrator.',
  unsupported_response_type: 'The provider does not support how the broker connects. Ask your administrator.',
  invalid_scope: 'The provider refused the permissions the broker asked for. Ask your administrator.',
  server_error: 'The provider had a problem. Nothing was stored; try connecting again later.',
  temporarily_unavailable: 'The provider is busy or down for maintenance. Nothing was stored; try connecting again later.',
};

/** A known code in words; any other (null) gets a general sentence. */
export function explainCallbackError(code: string | null): string {
  return (code !== null ? MEANING[code] : undefined) ?? 'The provider reported an error. Nothing was stored; try connecting again.';
}

/** Where Connect sends the browser: the broker's authorize route, coming back to this page. */
export function connectUrl(serviceId: string): string {
  const base = (import.meta.env.VITE_BROKER_URL as string | undefined) ?? '';
  const redirect = `${window.location.origin}/connections`;
  return `${base}/api/third-party/${encodeURIComponent(serviceId)}/oauth2/authorize?redirect_uri=${encodeURIComponent(redirect)}`;
}
