/** What the third-party callback said through this page's query (API.md "End-user server"). */
export type CallbackResult = { kind: 'success'; serviceId: string | null } | { kind: 'error'; code: string; description: string | null };

/** The query parameters the callback adds, removed from the address bar once read. */
export const CALLBACK_PARAMS = ['success', 'service_id', 'error', 'error_description'] as const;

/** Longest text taken from the address bar (the broker caps descriptions at 200 characters). */
const MAX = 300;

function clip(value: string): string {
  return value.length > MAX ? `${value.slice(0, MAX)}…` : value;
}

export function readCallback(params: URLSearchParams): CallbackResult | null {
  const error = params.get('error');
  if (error !== null && error.length > 0) {
    const description = params.get('error_description');
    return { kind: 'error', code: clip(error), description: description === null || description.length === 0 ? null : clip(description) };
  }
  if (params.get('success') === 'true') return { kind: 'success', serviceId: params.get('service_id') };
  return null;
}

const MEANING: Record<string, string> = {
  invalid_state: 'The connection link was invalid or had expired. Start connecting again from this page.',
  forbidden: 'The connection was started by someone else. Start connecting again from this page.',
  service_id_mismatch: 'The provider answered for a different service. Start connecting again from this page.',
  access_denied: 'The provider did not grant access (perhaps you declined). Nothing was stored.',
  token_exchange_failed: 'The provider refused to complete the connection. Try again; if it keeps failing, ask your administrator.',
  invalid_request: 'The provider reported an invalid request. Try again; if it keeps failing, ask your administrator.',
};

/** Codes the broker itself chose (API.md callback failures): their description is the broker's, not the provider's. */
const BROKER_CODES = new Set(['invalid_state', 'forbidden', 'service_id_mismatch', 'token_exchange_failed']);

export function isProviderError(code: string): boolean {
  return !BROKER_CODES.has(code);
}

/** The error code in words, for codes the broker names; the provider's own codes get a general sentence. */
export function explainCallbackError(code: string): string {
  return MEANING[code] ?? 'The provider reported an error. Nothing was stored; try connecting again.';
}

/** Where Connect sends the browser: the broker's authorize route, coming back to this page. */
export function connectUrl(serviceId: string): string {
  const base = (import.meta.env.VITE_BROKER_URL as string | undefined) ?? '';
  const redirect = `${window.location.origin}/connections`;
  return `${base}/api/third-party/${encodeURIComponent(serviceId)}/oauth2/authorize?redirect_uri=${encodeURIComponent(redirect)}`;
}
