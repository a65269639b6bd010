const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for a lower-case canonical UUID string (IDs are lower-case UUID strings). */
export function isCanonicalUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** True for any UUID-shaped string, whatever the letter case. */
export function isUuidShaped(value: string): boolean {
  return UUID_PATTERN.test(value.toLowerCase());
}
