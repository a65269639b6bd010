import { QueryClient, useQuery } from '@tanstack/react-query';
import type { components } from './admin-api';
import { ApiFailure, api, failureOf, unwrap } from './client';

/**
 * The console's query client and the queries every page shares. A page's own queries live next to the page; a
 * change invalidates what it makes stale by key.
 */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx will not change by asking again; a network error may.
      retry: (count, error) => !(error instanceof ApiFailure) && count < 2,
      refetchOnWindowFocus: true,
      staleTime: 5_000,
    },
  },
});

/** The signed-in administrator (`GET /api/me`): an `admin` changes things, a `viewer` only looks. */
export type Me = components['schemas']['MeResponse'];

export const queryKeys = {
  me: ['me'],
} as const;

/**
 * A GET of the admin API by path, for an answer the generated types do not name yet; an error answer throws the
 * same `ApiFailure` as `unwrap`.
 */
export async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) throw failureOf(response, body);
  return body as T;
}

/** Who is signed in and with which role (the header's name and badge; every page's write controls). */
export function useMe() {
  return useQuery({ queryKey: queryKeys.me, queryFn: () => unwrap(api.GET('/api/me')), staleTime: 60_000 });
}

/** True when the signed-in administrator is a viewer: every write control is disabled, with `READ_ONLY_REASON`. */
export function useReadOnly(): boolean {
  return useMe().data?.role === 'viewer';
}
