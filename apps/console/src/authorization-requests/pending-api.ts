import { unwrap } from '../api/client';
import type { AuthorizationRequestView } from './types';

// Temporary: the calls by hand until the generated client has the routes.
const base = (import.meta.env.VITE_BROKER_URL as string | undefined) ?? '';
const call = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method,
    credentials: 'include',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json: unknown = await response.json().catch(() => ({}));
  return unwrap<{ data: AuthorizationRequestView }>(
    Promise.resolve({
      data: response.ok ? (json as { data: AuthorizationRequestView }) : undefined,
      error: response.ok ? undefined : json,
      response,
    }),
  );
};
const path = (id: string) => `/api/authorization-requests/${encodeURIComponent(id)}`;
export const readRequest = (id: string) => call('GET', path(id));
export const allowRequest = (id: string, body: { valid_until: string | null }) =>
  call('POST', `${path(id)}/allow`, body);
export const denyRequest = (id: string) => call('POST', `${path(id)}/deny`);
