import createClient from 'openapi-fetch';
import type { paths } from './user-api';

/**
 * The broker's end-user API, typed from openapi/user-api.json (`npm run build` regenerates
 * user-api.d.ts with openapi-typescript, so the console cannot drift from the API).
 * Same origin by default; a console hosted elsewhere is built with `VITE_BROKER_URL`.
 * The session cookie goes with every call; the browser adds the `Origin` the broker checks.
 */
export const api = createClient<paths>({
  baseUrl: (import.meta.env.VITE_BROKER_URL as string | undefined) ?? '',
  credentials: 'include',
});

/** An answer of the broker that is not a success: its status and `{error, message}`. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

interface Answer<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

/** The data of a successful answer, or an `ApiFailure` carrying the broker's error. */
export async function unwrap<T>(call: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const body = (error ?? {}) as { error?: unknown; message?: unknown };
  throw new ApiFailure(
    response.status,
    typeof body.error === 'string' ? body.error : 'error',
    typeof body.message === 'string' ? body.message : response.statusText,
  );
}
