import createClient from 'openapi-fetch';
import type { paths } from './admin-api';

/**
 * The broker's admin API, typed from openapi/admin-api.json (`npm run build` regenerates admin-api.d.ts with
 * openapi-typescript, so the console cannot drift from the API). Same origin as the console: the SSO proxy in front
 * of the admin server adds the administrator's identity to the page and to every call alike.
 */
export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });

/** One field the API refused, and why (`details` of a `validation failed` or `invalid request body` answer). */
export interface FieldProblem {
  readonly field: string;
  readonly problem: string;
}

/** An answer of the admin API that is not a success: its status, `{error, message}` and the field problems. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: readonly FieldProblem[] = [],
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

function detailsOf(value: unknown): FieldProblem[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry: unknown) => {
    if (typeof entry !== 'object' || entry === null) return [];
    const { field, problem } = entry as { field?: unknown; problem?: unknown };
    return typeof field === 'string' && typeof problem === 'string' ? [{ field, problem }] : [];
  });
}

/** The failure an error answer stands for (its body's `error`, `message` and `details`, when it has them). */
export function failureOf(response: Response, body: unknown): ApiFailure {
  const envelope = (typeof body === 'object' && body !== null ? body : {}) as {
    error?: unknown;
    message?: unknown;
    details?: unknown;
  };
  return new ApiFailure(
    response.status,
    typeof envelope.error === 'string' ? envelope.error : 'error',
    typeof envelope.message === 'string' ? envelope.message : response.statusText,
    detailsOf(envelope.details),
  );
}

/** The data of a successful answer, or an `ApiFailure` carrying the broker's error. */
export async function unwrap<T>(call: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  throw failureOf(response, error);
}
