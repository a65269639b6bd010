const RFC3339_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * An RFC 3339 date-time with a time zone (`2030-01-01T00:00:00Z`, `...+02:00`), or
 * undefined when it is not one. Every field is checked against the calendar first:
 * `Date.parse` rolls an impossible date over (`2030-02-30` is 2 March), and hour 24 into
 * the next day. A leap second (`:60`) cannot be represented and is refused too.
 */
export function parseRfc3339DateTime(value: string): Date | undefined {
  const match = RFC3339_DATE_TIME.exec(value);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  if (match[8] !== undefined && (Number(match[9]) > 23 || Number(match[10]) > 59)) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : new Date(time);
}
