import { describe, expect, it } from 'vitest';
import { ACCESS_TOKEN_TYPE, JWT_BEARER, JWT_TOKEN_TYPE } from '../token-exchange/token-types';
import { ImpersonationRefusal } from './impersonation-refusal';
import { isUnderPrefix, parseImpersonationRequest } from './impersonation-request';

const PREFIX = 'https://broker.example.com/impersonation';
const unsigned = (claims: Record<string, unknown>): string =>
  `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
const form = (overrides: Record<string, string | undefined> = {}): ReadonlyMap<string, string> => {
  const fields: Record<string, string | undefined> = {
    audience: `${PREFIX}/billing-agent`,
    client_assertion_type: JWT_BEARER,
    client_assertion: unsigned({ iss: 'https://gw.example.com' }),
    actor_token_type: JWT_TOKEN_TYPE,
    actor_token: unsigned({ iss: 'https://idp.example.com', sub: 'eve' }),
    subject_token_type: JWT_TOKEN_TYPE,
    subject_token: unsigned({ sub: 'alice' }),
    ...overrides,
  };
  return new Map(Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined));
};

function failure(fields: Record<string, string | undefined>): string {
  try {
    parseImpersonationRequest(form(fields), PREFIX);
  } catch (error) {
    expect(error).toBeInstanceOf(ImpersonationRefusal);
    expect((error as ImpersonationRefusal).code).toBe('invalid_request');
    return (error as ImpersonationRefusal).failure;
  }
  throw new Error('expected a refusal');
}

describe('parseImpersonationRequest', () => {
  it('reads the target suffix, the scope and the three credentials, unverified', () => {
    const request = parseImpersonationRequest(form({ scope: 'read', requested_token_type: ACCESS_TOKEN_TYPE }), PREFIX);
    expect(request.targetSuffix).toBe('billing-agent');
    expect(request.scope).toBe('read');
    expect(request.credentials.subject).toMatchObject({ alg: 'none', unsigned: true, claims: { sub: 'alice' } });
  });

  it('refuses every audience that does not name one agent under the prefix, before anything else', () => {
    expect(failure({ audience: undefined, resource: 'https://x.example.com' })).toBe('audience_missing');
    expect(failure({ audience: 'billing-agent' })).toBe('audience_bare_suffix');
    expect(failure({ audience: 'https://elsewhere.example.com/x' })).toBe('audience_outside_prefix');
    expect(failure({ audience: PREFIX })).toBe('audience_bare_prefix');
    expect(failure({ audience: `${PREFIX}/a/b` })).toBe('audience_extra_segments');
    expect(failure({ audience: `${PREFIX}/0F8FAD5B-D9CB-469F-A165-70867728950E` })).toBe('audience_uuid_not_canonical');
    expect(failure({ audience: `${PREFIX}/bad id` })).toBe('audience_suffix_malformed');
  });

  it('then the request shape, then the credentials', () => {
    expect(failure({ resource: 'https://x.example.com', client_assertion: undefined })).toBe('resource_present');
    expect(failure({ requested_token_type: JWT_TOKEN_TYPE })).toBe('requested_token_type');
    expect(failure({ actor_token_type: ACCESS_TOKEN_TYPE })).toBe('malformed_credentials');
    expect(failure({ client_assertion: undefined })).toBe('malformed_credentials');
    expect(failure({ subject_token: 'not-a-jwt' })).toBe('malformed_credentials');
  });
});

describe('isUnderPrefix', () => {
  it('is the prefix itself or a path below it, never a longer host or segment', () => {
    expect(isUnderPrefix(PREFIX, PREFIX)).toBe(true);
    expect(isUnderPrefix(`${PREFIX}/x`, PREFIX)).toBe(true);
    expect(isUnderPrefix(`${PREFIX}x/y`, PREFIX)).toBe(false);
  });
});
