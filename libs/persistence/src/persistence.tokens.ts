/**
 * Injection token of the process's storage backend (`Database.backend`: 'pglite' or
 * 'postgres'), for the repositories whose locking differs between the two.
 */
export const STORAGE_BACKEND = Symbol('STORAGE_BACKEND');
