import { canonicalJson } from './values';

/** A glob that matches exactly `text` (README "Parameter patterns": `\` escapes `*`, `?`, `[`, `]` and itself). */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}

/**
 * The pattern field's starting text for a reviewed value: strings as an exact glob, anything else as its
 * canonical JSON text (non-string values match only that text, never a glob).
 */
export function initialPattern(value: unknown): string {
  return typeof value === 'string' ? escapeGlob(value) : canonicalJson(value);
}

/** One row of the pattern form: the argument, whether it is constrained, and its glob. */
export interface PatternRow {
  readonly name: string;
  readonly constrained: boolean;
  readonly glob: string;
}

export function initialRows(args: Record<string, unknown>): PatternRow[] {
  return Object.entries(args).map(([name, value]) => ({ name, constrained: true, glob: initialPattern(value) }));
}

/** The `params_pattern` the rows describe: only constrained arguments are named; the others take any value. */
export function toPattern(rows: readonly PatternRow[]): Record<string, string> {
  const pattern: Record<string, string> = {};
  for (const row of rows) if (row.constrained) Object.defineProperty(pattern, row.name, { value: row.glob, enumerable: true, writable: true, configurable: true });
  return pattern;
}
