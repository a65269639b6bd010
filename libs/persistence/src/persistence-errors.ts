import { QueryFailedError } from 'typeorm';

/** The PostgreSQL error code and constraint of a failed query, when it is one. */
export function constraintViolation(error: unknown): { code: string; constraint: string | undefined } | undefined {
  if (!(error instanceof QueryFailedError)) return undefined;
  const driverError = error.driverError as { code?: unknown; constraint?: unknown };
  if (typeof driverError.code !== 'string') return undefined;
  return {
    code: driverError.code,
    constraint: typeof driverError.constraint === 'string' ? driverError.constraint : undefined,
  };
}

/** PostgreSQL SQLSTATEs the repositories translate. */
export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';
/** Raised by an `ON DELETE RESTRICT` foreign key. */
export const RESTRICT_VIOLATION = '23001';

/** True when a write failed because another row still references, or no longer exists for, a foreign key. */
export function isReferenceViolation(error: unknown): boolean {
  const code = constraintViolation(error)?.code;
  return code === FOREIGN_KEY_VIOLATION || code === RESTRICT_VIOLATION;
}
