/** Dates and times as the person reads them (their locale), from the API's RFC 3339 strings. */
export function formatDate(value: string | null | undefined): string {
  if (value === null || value === undefined) return 'never';
  return new Date(value).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
