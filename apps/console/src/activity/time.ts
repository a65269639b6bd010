/** The activity page's time ranges and relative times. */

export type RangeChoice = 'all' | '24h' | '7d' | '30d' | 'custom';

export const RANGE_LABELS: Record<RangeChoice, string> = {
  all: 'All time',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
  custom: 'Between dates…',
};

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PRESETS: Record<'24h' | '7d' | '30d', number> = { '24h': DAY, '7d': 7 * DAY, '30d': 30 * DAY };

/** The API's `from`/`to` (RFC 3339) of a range; computed once when the person picks it, so the pages after the first stay stable. */
export interface TimeRange {
  readonly from?: string;
  readonly to?: string;
}

/** A preset range ending now. */
export function presetRange(choice: RangeChoice, now: Date): TimeRange {
  if (choice === 'all' || choice === 'custom') return {};
  return { from: new Date(now.getTime() - PRESETS[choice]).toISOString() };
}

/**
 * Dates picked in `<input type="date">` (`YYYY-MM-DD`, the person's own days): from the start of
 * the first day to the end of the last. Undefined when the last day comes before the first.
 */
export function dateRange(fromDay: string, toDay: string): TimeRange | undefined {
  const start = fromDay === '' ? undefined : localMidnight(fromDay, 0);
  const end = toDay === '' ? undefined : localMidnight(toDay, 1);
  if (start !== undefined && end !== undefined && end.getTime() <= start.getTime()) return undefined;
  return {
    ...(start === undefined ? {} : { from: start.toISOString() }),
    ...(end === undefined ? {} : { to: end.toISOString() }),
  };
}

function localMidnight(day: string, plusDays: number): Date {
  const [year, month, date] = day.split('-').map(Number);
  return new Date(year ?? 1970, (month ?? 1) - 1, (date ?? 1) + plusDays);
}

const UNITS: readonly [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * DAY],
  ['month', 30 * DAY],
  ['week', 7 * DAY],
  ['day', DAY],
  ['hour', HOUR],
  ['minute', 60_000],
];

/** "3 hours ago", "yesterday", "just now", in the person's language. */
export function relativeTime(value: string, now: Date = new Date()): string {
  const elapsed = new Date(value).getTime() - now.getTime();
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(elapsed) >= size) return format.format(Math.round(elapsed / size), unit);
  }
  return 'just now';
}

/** The person's own calendar day of an instant, `YYYY-MM-DD` (the activity list's groups). */
export function localDay(value: string | Date): string {
  const date = new Date(value);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

/** A day's heading: "Today", "Yesterday", else the date in words ("Tuesday, November 3, 2026"), in the person's language. */
export function dayHeading(day: string, now: Date = new Date()): string {
  if (day === localDay(now)) return 'Today';
  if (day === localDay(new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1))) return 'Yesterday';
  return new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).format(
    localMidnight(day, 0),
  );
}
