const FIRST_WORD = /^\s*([A-Za-z]{1,20})\b/;

/**
 * The operation of a SQL statement for its span (never parameters, never the
 * text): its first keyword, upper-cased, or `OTHER`. The broker's statements start with a
 * keyword, never with a value, so nothing a caller sent can appear.
 */
export function sqlOperation(sql: string): string {
  return FIRST_WORD.exec(sql)?.[1]?.toUpperCase() ?? 'OTHER';
}
