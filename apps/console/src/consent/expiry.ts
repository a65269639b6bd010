/** The expiry choices of the consent page, turned into the grant's `valid_until`. */
export type ExpiryChoice = '1d' | '30d' | '90d' | 'none' | 'date';

export interface Expiry {
  readonly choice: ExpiryChoice;
  /** `YYYY-MM-DD` in the person's time zone, for `date`. */
  readonly date: string;
}

export const EXPIRY_OPTIONS: readonly {
  readonly value: ExpiryChoice;
  readonly label: string;
  readonly days?: number;
}[] = [
  { value: '1d', label: '1 day', days: 1 },
  { value: '30d', label: '30 days', days: 30 },
  { value: '90d', label: '90 days', days: 90 },
  { value: 'none', label: 'No expiry' },
  { value: 'date', label: 'Until a date' },
];

const DAY = 86_400_000;

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** A local calendar date as `YYYY-MM-DD` (what `<input type="date">` reads and writes). */
export function localDate(value: Date): string {
  return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
}

/** The end of a local calendar day, or undefined for a malformed date. */
function endOfLocalDay(date: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (match === null) return undefined;
  const end = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]), 23, 59, 59, 0);
  return Number.isNaN(end.getTime()) || localDate(end) !== date ? undefined : end;
}

/** The choice matching the current grant: its exact date, no expiry, or 30 days for a new grant. */
export function initialExpiry(current: { valid_until: string | null } | undefined, now: Date): Expiry {
  if (current === undefined) return { choice: '30d', date: localDate(new Date(now.getTime() + 30 * DAY)) };
  if (current.valid_until === null) return { choice: 'none', date: localDate(new Date(now.getTime() + 30 * DAY)) };
  return { choice: 'date', date: localDate(new Date(current.valid_until)) };
}

/**
 * The grant's `valid_until` (RFC 3339, UTC) or null for no expiry; a string error when the date is
 * not a future day. A date equal to the current grant's keeps its exact instant (nothing changes).
 */
export function validUntil(
  expiry: Expiry,
  now: Date,
  current?: string | null,
): { value: string | null } | { error: string } {
  const option = EXPIRY_OPTIONS.find((o) => o.value === expiry.choice);
  if (expiry.choice === 'none') return { value: null };
  if (option?.days !== undefined) return { value: new Date(now.getTime() + option.days * DAY).toISOString() };
  if (
    typeof current === 'string' &&
    localDate(new Date(current)) === expiry.date &&
    Date.parse(current) > now.getTime()
  )
    return { value: new Date(current).toISOString() };
  const end = endOfLocalDay(expiry.date);
  if (end === undefined) return { error: 'Enter a date.' };
  if (end.getTime() <= now.getTime()) return { error: 'Choose a date in the future.' };
  return { value: end.toISOString() };
}
