import { describe, expect, it } from 'vitest';
import { CelCompileError, celReferences, compileCel } from './cel';

describe('compileCel', () => {
  it('evaluates over the declared variables, mixing map value types, returning JSON values', () => {
    const claims = compileCel(
      '{"aud": "https://api.example.com", "tenant": agent.canonical_id, "n": 3, "roles": ["a", principal]}',
      ['agent', 'principal', 'request'],
    );
    expect(claims({ agent: { canonical_id: 'cal' }, principal: 'alice', request: {} })).toEqual({
      aud: 'https://api.example.com',
      tenant: 'cal',
      n: 3,
      roles: ['a', 'alice'],
    });
    expect(compileCel('subject_token.sub == "x"', ['subject_token'])({ subject_token: { sub: 'x' } })).toBe(true);
  });

  it('refuses a syntax error or an undeclared variable at compile time, in one line', () => {
    expect(() => compileCel('{"a": ', ['agent'])).toThrow(CelCompileError);
    expect(() => compileCel('nobody.sub', ['agent'])).toThrow(CelCompileError);
    try {
      compileCel('{"a": ', ['agent']);
    } catch (error) {
      expect((error as Error).message).not.toContain('\n');
    }
  });
});

describe('celReferences', () => {
  it('lists variables and their first-level fields, not string literals', () => {
    const refs = celReferences(
      '"subject_token.email" == x && subject_token.email.endsWith("@example.com") && has(actor_token.sub)',
    );
    expect(refs.has('subject_token.email')).toBe(true);
    expect(refs.has('subject_token')).toBe(true);
    expect(refs.has('actor_token.sub')).toBe(true);
    expect(refs.has('x')).toBe(true);
    expect(celReferences('"subject_token" == "a"').has('subject_token')).toBe(false);
  });
});
