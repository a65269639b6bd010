/**
 * The authenticated end user (or admin) as established by the trusted proxy's header or
 * the broker's session cookie. An email, user name or opaque id; trimmed, 1-200 characters.
 */
export interface Principal {
  readonly id: string;
  /** How the principal was established on this request. */
  readonly source: 'header' | 'session_cookie';
}

export const PRINCIPAL_MAX_LENGTH = 200;

/** Rejection reasons of a principal value, in the order they are checked. */
export type PrincipalProblem = 'empty' | 'too_long' | 'control_characters';

/** Checks a raw principal value; returns the trimmed value or the problem. */
export function normalisePrincipal(
  raw: string,
): { ok: true; value: string } | { ok: false; problem: PrincipalProblem } {
  const value = raw.trim();
  if (value.length === 0) return { ok: false, problem: 'empty' };
  if (value.length > PRINCIPAL_MAX_LENGTH) return { ok: false, problem: 'too_long' };
  // C0 controls, DEL and C1 controls: never part of an identity and a log-injection vector.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) return { ok: false, problem: 'control_characters' };
  return { ok: true, value };
}
