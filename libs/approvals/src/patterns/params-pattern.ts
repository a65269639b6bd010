import { ApprovalError, type FieldIssue, type ParamsPattern } from '@broker/domain';
import { minimatch, type MinimatchOptions } from 'minimatch';
import { canonicalJson } from './canonical-json';

/**
 * The one glob dialect of `params_pattern` (docs/approvals.md), minimatch 11:
 * - `*` any run of characters except `/`, `**` as a whole segment any run including `/`,
 *   `?` one character except `/`, `[...]` a class, `\` escapes the next character;
 * - `dot: true`: wildcards match a leading `.` too;
 * - no extglob `+(a|b)`, no negation `!x`, no comments `#x`, and no brace expansion
 *   `{a,b}` / `{1..99999}` (a brace range expands into a pattern set of any size);
 * - text compared as written: no path normalisation (`a//b`, `./`, `..` stay literal),
 *   POSIX rules on every platform; case-sensitive.
 * minimatch 11 matches without backtracking: `*a*a*a*a*a*a*b` against 200 `a`s takes
 * milliseconds (picomatch and micromatch took over 10 s).
 */
export const PATTERN_DIALECT: Readonly<MinimatchOptions> = Object.freeze({
  dot: true,
  noext: true,
  nonegate: true,
  nocomment: true,
  nobrace: true,
  optimizationLevel: 0,
  preserveMultipleSlashes: true,
  platform: 'linux',
});

/** Caps of a `params_pattern`: per pattern in UTF-8 bytes, entries per object. */
export const MAX_PATTERN_BYTES = 1024;
export const MAX_PATTERN_ENTRIES = 64;
export const MAX_ARGUMENT_NAME_LENGTH = 255;

function invalidPattern(issues: readonly FieldIssue[]): ApprovalError {
  return new ApprovalError(
    'pattern_invalid',
    issues.map((issue) => `${issue.field}: ${issue.problem}`).join('; '),
    issues,
  );
}

/**
 * Whether one argument value is covered by one glob.
 * Strings are matched in the dialect above. Every other JSON value (number, boolean, null,
 * object, array) is never globbed: it matches only a pattern that is exactly its canonical
 * JSON text and contains no `*` (`5` matches `"5"`, `true` matches `"true"`, nothing matches
 * `"*"`), so a wildcard can never widen a structured value. An absent argument matches nothing.
 */
export function argumentMatches(value: unknown, glob: string): boolean {
  if (value === undefined) return false;
  if (typeof value === 'string') return minimatch(value, glob, PATTERN_DIALECT);
  return !glob.includes('*') && glob === canonicalJson(value);
}

/**
 * A `params_pattern` as the API receives it (an object of argument name → glob), checked
 * against the caps; anything else is 422 `invalid_pattern` naming each offending entry.
 */
export function parseParamsPattern(raw: Readonly<Record<string, unknown>>): ParamsPattern {
  const entries = Object.entries(raw);
  if (entries.length > MAX_PATTERN_ENTRIES)
    throw invalidPattern([
      {
        field: 'params_pattern',
        problem: `at most ${MAX_PATTERN_ENTRIES} argument patterns are allowed (got ${entries.length})`,
      },
    ]);
  const issues: FieldIssue[] = [];
  const pattern: Record<string, string> = {};
  for (const [name, glob] of entries) {
    const field = `params_pattern.${name.slice(0, 64)}`;
    if (name.length === 0 || name.length > MAX_ARGUMENT_NAME_LENGTH)
      issues.push({ field, problem: `argument names are 1-${MAX_ARGUMENT_NAME_LENGTH} characters` });
    else if (typeof glob !== 'string') issues.push({ field, problem: 'must be a glob string' });
    else if (Buffer.byteLength(glob, 'utf8') > MAX_PATTERN_BYTES)
      issues.push({ field, problem: `must be at most ${MAX_PATTERN_BYTES} bytes` });
    else Object.defineProperty(pattern, name, { value: glob, enumerable: true, writable: false, configurable: false });
  }
  if (issues.length > 0) throw invalidPattern(issues);
  return pattern;
}

/**
 * The resulting pattern must cover the reviewed arguments. Every
 * constrained argument must be one the user reviewed and its reviewed value must match;
 * arguments the pattern does not name are unconstrained. Values are never echoed.
 */
export function assertCoversReviewed(pattern: ParamsPattern, reviewed: Readonly<Record<string, unknown>>): void {
  const issues: FieldIssue[] = [];
  for (const [name, glob] of Object.entries(pattern)) {
    const field = `params_pattern.${name.slice(0, 64)}`;
    if (!Object.prototype.hasOwnProperty.call(reviewed, name))
      issues.push({ field, problem: 'names an argument the reviewed call does not have' });
    else if (!argumentMatches(reviewed[name], glob))
      issues.push({ field, problem: 'does not match the reviewed value of this argument' });
  }
  if (issues.length > 0) throw invalidPattern(issues);
}

/** Whether a call's arguments fall inside a stored scope (`null`: exactly the reviewed arguments, by hash). */
export function scopeCovers(
  pattern: ParamsPattern | null,
  reviewedHash: string,
  callHash: string,
  call: Readonly<Record<string, unknown>>,
): boolean {
  if (pattern === null) return reviewedHash === callHash;
  return Object.entries(pattern).every(
    ([name, glob]) => Object.prototype.hasOwnProperty.call(call, name) && argumentMatches(call[name], glob),
  );
}

/** The scope an approval grants, in words for the approval page (no argument values). */
export function renderScope(toolName: string, pattern: ParamsPattern | null): string {
  if (pattern === null) return `${toolName}, only with exactly the reviewed arguments`;
  const constrained = Object.entries(pattern);
  if (constrained.length === 0) return `${toolName}, with any arguments`;
  const parts = constrained.map(([name, glob]) => `${name} matches ${JSON.stringify(glob)}`);
  return `${toolName}, where ${parts.join(' and ')}; any other argument may have any value`;
}
