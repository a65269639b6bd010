const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** "12 Mar 2026, 14:05" in the browser's language and time zone. */
export function dateTime(iso: string): string {
  return DATE_TIME.format(new Date(iso));
}

/** "12 Mar 2026". */
export function date(iso: string): string {
  return DATE.format(new Date(iso));
}

/** "today", "1 day", "12 days": an age in whole days. */
export function days(count: number): string {
  if (count <= 0) return 'less than a day';
  return count === 1 ? '1 day' : `${count} days`;
}

/** "just now", "5 minutes ago", "3 hours ago", "2 days ago", from `now`. */
export function ago(iso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000));
  if (seconds < 60) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return minutes === 1 ? '1 minute ago' : `${minutes} minutes ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return hours === 1 ? '1 hour ago' : `${hours} hours ago`;
  const whole = Math.round(hours / 24);
  return whole === 1 ? '1 day ago' : `${whole} days ago`;
}

/** "1 agent", "3 agents". */
export function count(n: number, one: string, many: string = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
