import { describe, expect, it } from 'vitest';
import { decisionRecord, stringClaim } from './impersonation-decision-record';

describe('decisionRecord', () => {
  it('records an early refusal with every field present and empty', () => {
    expect(
      decisionRecord(undefined, {}, { outcome: 'refused', oauthError: 'invalid_request', failure: 'audience_missing' }),
    ).toEqual({
      routing_audience: null,
      target_agent_id: null,
      rule: null,
      client_issuer: null,
      actor_issuer: null,
      subject_issuer: null,
      roles: [],
      client_id: null,
      actor: null,
      subject: null,
      outcome: 'refused',
      oauth_error: 'invalid_request',
      failure: 'audience_missing',
    });
  });

  it('names the claims it records but never a credential, truncating long claims', () => {
    const presented = (iss: string) => ({
      jwt: 'header.payload.signature',
      alg: 'ES256',
      claims: { iss },
      unsigned: false,
    });
    const record = decisionRecord(
      'aud',
      {
        credentials: {
          client: presented('https://gw'),
          actor: presented('https://idp'),
          subject: presented('x'.repeat(600)),
        },
      },
      { outcome: 'issued' },
    );
    expect(record).toMatchObject({
      routing_audience: 'aud',
      client_issuer: 'https://gw',
      roles: ['client_assertion', 'actor', 'subject'],
      outcome: 'issued',
      oauth_error: null,
      failure: null,
    });
    expect(record.subject_issuer).toHaveLength(512);
    expect(JSON.stringify(record)).not.toContain('header.payload.signature');
  });
});

describe('stringClaim', () => {
  it('keeps non-empty strings only', () => {
    expect(stringClaim('a')).toBe('a');
    expect(stringClaim('')).toBeNull();
    expect(stringClaim(5)).toBeNull();
  });
});
