import type { BrokerConfig } from '@broker/config';
import { CryptoRandom, type Agent } from '@broker/domain';
import type { AgentRepository, TokenStateRepository } from '@broker/persistence';
import { BrokerMetrics } from '@broker/telemetry';
import { FrozenClock } from '@broker/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalDetailJson, parseToolCallDetails, TOOL_CALL_TYPE } from '../ciba/tool-call-details';
import { generateSigningKey, importPrivateKey, type GeneratedKey } from '../signing-keys/key-material';
import type { SigningKeyService } from '../signing-keys/signing-key.service';
import { AccessTokenIssuer } from '../token/access-token-issuer';
import type { LifecycleClients } from './lifecycle-clients';
import { LocalTokenVerifier } from './local-token-verifier';
import { TokenIntrospection } from './token-introspection';

const ISSUER = 'https://broker.example.com';
const MCP = 'https://mcp.example.com/mcp';
const AGENT = {
  id: '0b6f3c1e-6d0b-4c52-8f3e-2a7d9b1c4e55',
  displayName: 'Agent',
  canonicalId: null,
  clientId: null,
  allowedScopes: [],
  suspension: null,
} as unknown as Agent;

/**
 * RFC 9396 §9.1: introspection answers an access token's `authorization_details` as the token carries them, through
 * the real issuer and verifier (the database's facts stubbed: the token is not revoked, the person's grant active).
 */
describe('TokenIntrospection: authorization_details', () => {
  const clock = new FrozenClock('2026-11-29T12:00:00Z');
  let key: GeneratedKey;
  const keys = {
    currentKey: () =>
      Promise.resolve({ kid: key.kid, algorithm: 'ES256', privateKey: importPrivateKey(key.privateKeyDer) }),
    jwks: () => Promise.resolve({ keys: [key.publicJwk] }),
  } as unknown as SigningKeyService;
  const config = {
    server: { enduser: { public_url: ISSUER } },
    oauth2_authorization_server: { local: { token_ttl: 3_600_000 } },
  } as unknown as BrokerConfig;
  const issuer = new AccessTokenIssuer(config, keys, clock, new CryptoRandom());
  const state = {
    accessTokenFacts: () =>
      Promise.resolve({
        revoked: false,
        familyRevoked: false,
        enterprise: false,
        grant: { validUntil: null, createdAt: new Date('2026-11-01T00:00:00Z') },
      }),
  } as unknown as TokenStateRepository;
  const agents = { findClient: () => Promise.resolve({ agent: AGENT }) } as unknown as AgentRepository;
  const gateway = { introspector: () => Promise.resolve({ kind: 'gateway' }) } as unknown as LifecycleClients;
  const introspection = new TokenIntrospection(
    gateway,
    new LocalTokenVerifier(keys, issuer, clock, new BrokerMetrics(false)),
    state,
    agents,
    issuer,
    clock,
    new BrokerMetrics(false),
  );
  const ask = (token: string) =>
    introspection.introspect(
      'application/x-www-form-urlencoded',
      Buffer.from(new URLSearchParams({ token }).toString()),
      undefined,
    );

  beforeAll(async () => {
    key = await generateSigningKey('ES256');
  });

  it('returns the approved entry of a backchannel token, exactly as the token carries it', async () => {
    const entry = {
      type: TOOL_CALL_TYPE,
      locations: [MCP],
      tool: 'send_payment',
      title: 'Send a payment',
      arguments: { to: 'acme@example.com', amount_eur: 120 },
      risk: 'critical',
    };
    const json = canonicalDetailJson(parseToolCallDetails(JSON.stringify([entry]), () => true));
    const { access_token: token } = await issuer.issue({
      agent: AGENT,
      principal: 'alice',
      scopes: [],
      grantType: 'urn:openid:params:grant-type:ciba',
      resources: [MCP],
      authorizationDetails: json,
      ttlSeconds: 120,
    });
    const answer = await ask(token);
    expect(answer).toMatchObject({ active: true, sub: 'alice', aud: MCP, client_id: AGENT.id });
    expect(answer.authorization_details).toEqual([entry]);
    expect(answer.exp! - answer.iat!).toBe(120);
  });

  it('has no authorization_details for a token without them', async () => {
    const { access_token: token } = await issuer.issue({
      agent: AGENT,
      principal: 'alice',
      scopes: ['mail.read'],
      grantType: 'authorization_code',
    });
    const answer = await ask(token);
    expect(answer).toMatchObject({ active: true, scope: 'mail.read' });
    expect(answer).not.toHaveProperty('authorization_details');
  });
});
