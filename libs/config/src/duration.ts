const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * Parses a duration such as `500ms`, `30s`, `10m`, `1h`, `7d` (or a bare number of
 * seconds) into milliseconds. Returns `undefined` for anything else.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * 1_000 : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(value);
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = (match[2] ?? 's') as keyof typeof UNIT_MS;
  return Math.round(amount * UNIT_MS[unit]);
}
