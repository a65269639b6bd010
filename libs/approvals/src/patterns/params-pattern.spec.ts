import { ApprovalError } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { argumentsHash } from './canonical-json';
import {
  argumentMatches,
  assertCoversReviewed,
  MAX_PATTERN_BYTES,
  MAX_PATTERN_ENTRIES,
  parseParamsPattern,
  renderScope,
  scopeCovers,
} from './params-pattern';

function problemOf(run: () => unknown): { code: string; fields: string[] } {
  try {
    run();
  } catch (error) {
    if (error instanceof ApprovalError) return { code: error.code, fields: error.details.map((d) => d.field) };
    throw error;
  }
  throw new Error('expected an ApprovalError');
}

describe('params_pattern glob dialect', () => {
  // A backtracking matcher would not finish these within the test's timeout (exponential in the stars); the speed
  // itself is not asserted (tests assert no timings).
  it("answers the ReDoS pattern *a*a*a*a*a*a*b against 200 a's", () => {
    expect(argumentMatches('a'.repeat(200), '*a*a*a*a*a*a*b')).toBe(false);
    expect(argumentMatches(`${'a'.repeat(200)}b`, '*a*a*a*a*a*a*b')).toBe(true);
    expect(argumentMatches('a'.repeat(100_000), `${'*a'.repeat(40)}*b`)).toBe(false);
  });

  it('matches strings with *, ?, [..] and escapes; * stops at /, ** crosses it', () => {
    expect(argumentMatches('bob@example.com', '*@example.com')).toBe(true);
    expect(argumentMatches('bob@example.org', '*@example.com')).toBe(false);
    expect(argumentMatches('report-7.pdf', 'report-?.pdf')).toBe(true);
    expect(argumentMatches('report-x.pdf', 'report-[0-9].pdf')).toBe(false);
    expect(argumentMatches('/home/a/b.txt', '/home/*')).toBe(false);
    expect(argumentMatches('/home/a/b.txt', '/home/**')).toBe(true);
    expect(argumentMatches('literal*star', 'literal\\*star')).toBe(true);
    expect(argumentMatches('literalXstar', 'literal\\*star')).toBe(false);
  });

  it('uses the documented dialect: dot files match, no braces, extglob, negation or comments, no path normalisation', () => {
    expect(argumentMatches('.env', '*')).toBe(true);
    expect(argumentMatches('a', '{a,b}')).toBe(false);
    expect(argumentMatches('{a,b}', '{a,b}')).toBe(true);
    expect(argumentMatches('x', '!y')).toBe(false);
    expect(argumentMatches('!y', '!y')).toBe(true);
    expect(argumentMatches('#note', '#note')).toBe(true);
    expect(argumentMatches('a', '+(a)')).toBe(false);
    expect(argumentMatches('a/b', 'a//b')).toBe(false);
    expect(argumentMatches('a/c', 'a/b/../*')).toBe(false);
    expect(argumentMatches('Report', 'report')).toBe(false);
  });

  it('matches non-string values only by an exact *-free pattern of their canonical JSON text', () => {
    expect(argumentMatches(5, '5')).toBe(true);
    expect(argumentMatches(5, '*')).toBe(false);
    expect(argumentMatches(5, '[0-9]')).toBe(false);
    expect(argumentMatches(true, 'true')).toBe(true);
    expect(argumentMatches(null, 'null')).toBe(true);
    expect(argumentMatches({ b: 1, a: [1, 2] }, '{"a":[1,2],"b":1}')).toBe(true);
    expect(argumentMatches({ b: 1, a: [1, 2] }, '{"b":1,"a":[1,2]}')).toBe(false);
    expect(argumentMatches(['*'], '["*"]')).toBe(false);
    expect(argumentMatches('5', '5')).toBe(true);
    expect(argumentMatches(undefined, '*')).toBe(false);
  });
});

describe('parseParamsPattern', () => {
  it('keeps names and globs, also a name like __proto__ as an own entry', () => {
    const pattern = parseParamsPattern(JSON.parse('{"to":"*@example.com","__proto__":"x"}') as Record<string, unknown>);
    expect(Object.keys(pattern)).toEqual(['to', '__proto__']);
    expect(JSON.stringify(pattern)).toBe('{"to":"*@example.com","__proto__":"x"}');
  });

  it(`refuses more than ${MAX_PATTERN_ENTRIES} entries, globs over ${MAX_PATTERN_BYTES} bytes, non-strings and empty names (pattern_invalid: 422 invalid_pattern at the edge)`, () => {
    const many = Object.fromEntries(Array.from({ length: MAX_PATTERN_ENTRIES + 1 }, (_, i) => [`a${i}`, '*']));
    expect(problemOf(() => parseParamsPattern(many))).toEqual({ code: 'pattern_invalid', fields: ['params_pattern'] });
    expect(
      parseParamsPattern(Object.fromEntries(Array.from({ length: MAX_PATTERN_ENTRIES }, (_, i) => [`a${i}`, '*']))),
    ).toHaveProperty('a63');
    expect(
      problemOf(() =>
        parseParamsPattern({
          long: 'x'.repeat(MAX_PATTERN_BYTES + 1),
          multi: '\u00e9'.repeat(513),
          ok: 'x'.repeat(MAX_PATTERN_BYTES),
          n: 5,
          '': 'x',
        }),
      ),
    ).toEqual({
      code: 'pattern_invalid',
      fields: ['params_pattern.long', 'params_pattern.multi', 'params_pattern.n', 'params_pattern.'],
    });
  });
});

describe('coverage of the reviewed call', () => {
  const reviewed = { to: 'bob@example.com', count: 3, body: 'hello' };

  it('accepts patterns matching every constrained reviewed value; unnamed arguments are unconstrained', () => {
    expect(() => assertCoversReviewed({ to: '*@example.com', count: '3' }, reviewed)).not.toThrow();
    expect(() => assertCoversReviewed({}, reviewed)).not.toThrow();
  });

  it('refuses a pattern that misses a reviewed value or names an argument the call does not have', () => {
    expect(problemOf(() => assertCoversReviewed({ to: '*@example.org', count: '*', extra: '*' }, reviewed))).toEqual({
      code: 'pattern_invalid',
      fields: ['params_pattern.to', 'params_pattern.count', 'params_pattern.extra'],
    });
  });

  it('decides a later call: null means exactly the reviewed arguments (by hash), a pattern its globs', () => {
    const hash = argumentsHash(reviewed);
    expect(scopeCovers(null, hash, argumentsHash({ body: 'hello', count: 3, to: 'bob@example.com' }), {})).toBe(true);
    expect(scopeCovers(null, hash, argumentsHash({ ...reviewed, body: 'other' }), {})).toBe(false);
    expect(scopeCovers({ to: '*@example.com' }, hash, 'x', { to: 'eve@example.com', body: 'anything' })).toBe(true);
    expect(scopeCovers({ to: '*@example.com' }, hash, 'x', { body: 'anything' })).toBe(false);
  });

  it('renders the scope without argument values', () => {
    expect(renderScope('send_email', null)).toBe('send_email, only with exactly the reviewed arguments');
    expect(renderScope('send_email', {})).toBe('send_email, with any arguments');
    expect(renderScope('send_email', { to: '*@example.com' })).toBe(
      'send_email, where to matches "*@example.com"; any other argument may have any value',
    );
  });
});
