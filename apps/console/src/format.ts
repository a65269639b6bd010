/** Dates and times as the person reads them (their locale), from the API's RFC 3339 strings. */
export function formatDate(value: string | null | undefined): string {
  if (value === null || value === undefined) return 'never';
  return new Date(value).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** An identity provider (an OAuth issuer) named by its host ("acme.okta.com"); the whole value when it is no URL. */
export function hostOf(issuer: string): string {
  try {
    return new URL(issuer).host || issuer;
  } catch {
    return issuer;
  }
}
