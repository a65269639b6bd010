import { describe, expect, it } from 'vitest';
import { RequestBodyError, RequestValidationError } from '../errors/request-errors';
import { checkedJsonBody, jsonBodyIssue, MAX_JSON_NESTING, RefusedJsonBody } from './refused-json-body';

const nested = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('jsonBodyIssue', () => {
  it('accepts 64 levels below the top-level value and refuses 65, naming the top-level field', () => {
    expect(MAX_JSON_NESTING).toBe(64);
    expect(jsonBodyIssue(JSON.parse(`{"a":${nested(64)}}`))).toBeUndefined();
    expect(jsonBodyIssue(JSON.parse(`{"ok":1,"a":${nested(65)}}`))).toEqual({
      field: 'a',
      problem: 'must not nest deeper than 64 levels',
    });
    expect(jsonBodyIssue(JSON.parse(nested(65)))).toBeUndefined();
    expect(jsonBodyIssue(JSON.parse(nested(66)))).toEqual({
      field: 'body',
      problem: 'must not nest deeper than 64 levels',
    });
  });

  it('walks 500,000 levels without recursion', () => {
    expect(jsonBodyIssue(JSON.parse(nested(500_000)))).toEqual({
      field: 'body',
      problem: 'must not nest deeper than 64 levels',
    });
  });

  it('refuses a number beyond the double range (JSON.parse makes it Infinity) without echoing it', () => {
    expect(jsonBodyIssue(JSON.parse('{"arguments":{"n":[1,-1e400]}}'))).toEqual({
      field: 'arguments',
      problem: 'is a number out of range',
    });
    expect(jsonBodyIssue(JSON.parse('{"n":1.7976931348623157e308,"m":-0,"k":5e-324}'))).toBeUndefined();
  });

  it('names a field printably and briefly', () => {
    const issue = jsonBodyIssue(JSON.parse(`{"${'k'.repeat(100)}\\u0000":${nested(65)}}`));
    expect(issue?.field).toBe(`${'k'.repeat(61)}...`);
    expect(jsonBodyIssue(JSON.parse(`{"a\\u0007":${nested(65)}}`))?.field).toBe('a?');
  });

  it('looks at own keys only, __proto__ included', () => {
    expect(jsonBodyIssue(JSON.parse(`{"__proto__":${nested(65)}}`))?.field).toBe('__proto__');
  });
});

describe('checkedJsonBody', () => {
  it('passes a good body through and stands a refusal in for a bad one', () => {
    const good: unknown = JSON.parse('{"a":[1,{"b":null}]}');
    expect(checkedJsonBody(good)).toBe(good);
    const refused = checkedJsonBody(JSON.parse(nested(100)));
    expect(refused).toBeInstanceOf(RefusedJsonBody);
    const error = (refused as RefusedJsonBody).error;
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues).toEqual([
      { field: 'body', problem: 'must not nest deeper than 64 levels' },
    ]);
    expect(new RefusedJsonBody(new RequestBodyError('malformed', 'x')).error).toBeInstanceOf(RequestBodyError);
  });
});
