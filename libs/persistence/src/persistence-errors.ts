import { QueryFailedError } from 'typeorm';

/** The PostgreSQL error code and constraint of a failed query, when it is one. */
export function constraintViolation(error: unknown): { code: string; constraint: string | undefined } | undefined {
  if (!(error instanceof QueryFailedError)) return undefined;
  const driverError = error.driverError as { code?: unknown; constraint?: unknown };
  if (typeof driverError.code !== 'string') return undefined;
  return { code: driverError.code, constraint: typeof driverError.constraint === 'string' ? driverError.constraint : undefined };
}

/** PostgreSQL SQLSTATEs the repositories translate. */
export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';
