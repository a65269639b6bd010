import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../catalogue/event-catalogue';
import { adminEvent, firstSigningKeyAdded } from './admin-events';
import {
  consentDenied,
  enterpriseAccessRevoked,
  grantEvent,
  sessionConnected,
  sessionDisconnected,
  sessionRefreshEvent,
} from './person-events';
import { accessTokenRevoked, impersonationDecided, refreshTokenEvent, tokenExchanged } from './token-events';

/** The builders shape each kind's row: actor, subject, outcome and details as the "Event kinds" table of docs/events.md says. */
describe('event builders', () => {
  it('a token exchange is the gateway’s, a refusal when it carries an OAuth error', () => {
    const subject = { principal: 'alice', agentId: 'a1', serviceId: 's1', resource: 'https://mail.example.com' };
    expect(tokenExchanged('gw', subject, null)).toMatchObject({
      type: 'token.exchanged',
      actor: { type: 'gateway', id: 'gw' },
      principal: 'alice',
      agentId: 'a1',
      serviceId: 's1',
      outcome: 'success',
      details: { resource: 'https://mail.example.com', oauth_error: null },
    });
    expect(tokenExchanged('gw', subject, 'invalid_grant')).toMatchObject({
      outcome: 'failure',
      details: { oauth_error: 'invalid_grant' },
    });
    expect(
      impersonationDecided({ actor: 'bob', subject: 'alice', agentId: 'a1', audience: 'x' }, 'access_denied'),
    ).toMatchObject({
      actor: { type: 'principal', id: 'bob' },
      principal: 'alice',
      outcome: 'failure',
      details: { audience: 'x', oauth_error: 'access_denied' },
    });
  });

  it('refresh and access token events are the agent’s, naming the family or the jti, never a token', () => {
    const family = { agentId: 'a1', principal: 'alice', familyId: 'f1' };
    expect(refreshTokenEvent('refresh_token.reused', family, 'failure')).toEqual({
      type: 'refresh_token.reused',
      actor: { type: 'agent', id: 'a1' },
      principal: 'alice',
      agentId: 'a1',
      serviceId: null,
      outcome: 'failure',
      traceId: null,
      details: { family_id: 'f1' },
    });
    expect(accessTokenRevoked('a1', null, 'j1', 'trace-1')).toMatchObject({
      actor: { type: 'agent', id: 'a1' },
      traceId: 'trace-1',
      details: { jti: 'j1' },
    });
  });

  it('a revoked enterprise access concerns the person, whoever revoked it', () => {
    const access = {
      id: 'e1',
      principal: 'alice',
      agentId: 'a1',
      issuer: 'https://idp.example.com',
      resourceUri: 'https://mcp.example.com/mcp',
    };
    const expected = {
      type: 'enterprise_access.revoked',
      principal: 'alice',
      agentId: 'a1',
      serviceId: null,
      outcome: 'success',
      details: { authorization_id: 'e1', issuer: 'https://idp.example.com', resource: 'https://mcp.example.com/mcp' },
    };
    expect(enterpriseAccessRevoked(access, { type: 'principal', id: 'alice' })).toMatchObject({
      ...expected,
      actor: { type: 'principal', id: 'alice' },
    });
    expect(enterpriseAccessRevoked(access, { type: 'admin', id: 'root' })).toMatchObject({
      ...expected,
      actor: { type: 'admin', id: 'root' },
    });
  });

  it('a person’s own changes have them as actor and subject; a refresh not forced is the broker’s', () => {
    expect(grantEvent('grant.revoked', 'alice', 'a1', {})).toMatchObject({
      actor: { type: 'principal', id: 'alice' },
      principal: 'alice',
      agentId: 'a1',
      details: {},
    });
    expect(consentDenied('alice', 'a1', ['https://r.example.com']).details).toEqual({
      resources: ['https://r.example.com'],
    });
    expect(sessionConnected('alice', 's1', ['mail']).serviceId).toBe('s1');
    expect(sessionDisconnected('alice', 's1', null).actor).toEqual({ type: 'principal', id: 'alice' });
    expect(sessionRefreshEvent('session.refreshed', 'alice', 's1', 'forced', null)).toMatchObject({
      actor: { type: 'principal', id: 'alice' },
      outcome: 'success',
    });
    expect(sessionRefreshEvent('session.needs_reauthentication', 'alice', 's1', 'proactive', null)).toMatchObject({
      actor: { type: 'broker', id: null },
      outcome: 'failure',
      details: { trigger: 'proactive' },
    });
  });

  it('admin writes are the admin’s with no subject principal; the first signing key is the broker’s', () => {
    expect(adminEvent('agent.deleted', 'root', { agentId: 'a1' }, {})).toMatchObject({
      actor: { type: 'admin', id: 'root' },
      principal: null,
      agentId: 'a1',
    });
    expect(firstSigningKeyAdded('k1', 'ES256')).toMatchObject({
      actor: { type: 'broker', id: null },
      traceId: null,
      details: { kid: 'k1', algorithm: 'ES256' },
    });
  });

  it('build only kinds of the catalogue', () => {
    const built = [
      tokenExchanged(null, { principal: null, agentId: null, serviceId: null, resource: null }, null),
      firstSigningKeyAdded('k', 'ES256'),
      grantEvent('grant.created', 'p', 'a', {
        permission_set_ids: [],
        service_ids: [],
        resource_ids: [],
        valid_until: null,
      }),
    ];
    for (const event of built) expect(EVENT_TYPES).toContain(event.type);
  });
});
