import type { BrokerConfig } from '@broker/config';
import { CryptoRandom, type Agent } from '@broker/domain';
import { FrozenClock } from '@broker/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalDetailJson, parseToolCallDetails } from '../ciba/tool-call-details';
import { generateSigningKey, importPrivateKey } from '../signing-keys/key-material';
import type { CurrentSigningKey, SigningKeyService } from '../signing-keys/signing-key.service';
import { AccessTokenIssuer } from './access-token-issuer';

const ISSUER = 'https://broker.example.com';
const MCP = 'https://mcp.example.com/mcp';
const AGENT = {
  id: '7c0b7f7e-3b7e-4c69-9d43-4b7e0f5f0a11',
  displayName: 'Agent',
  canonicalId: null,
  clientId: null,
  allowedScopes: [],
} as unknown as Agent;

function config(claimsExpression?: string): BrokerConfig {
  return {
    server: { enduser: { public_url: ISSUER } },
    oauth2_authorization_server: {
      local: {
        token_ttl: 3_600_000,
        ...(claimsExpression === undefined ? {} : { token_claims_expression: claimsExpression }),
      },
    },
  } as unknown as BrokerConfig;
}

function payload(token: string): Record<string, unknown> {
  const [, body] = token.split('.');
  return JSON.parse(Buffer.from(body ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('AccessTokenIssuer: authorization_details (RFC 9396 §7)', () => {
  let key: CurrentSigningKey;
  const keys = { currentKey: () => Promise.resolve(key) } as unknown as SigningKeyService;
  const issuer = (expression?: string) =>
    new AccessTokenIssuer(config(expression), keys, new FrozenClock('2026-11-29T12:00:00Z'), new CryptoRandom());
  const detailJson = canonicalDetailJson(
    parseToolCallDetails(
      JSON.stringify([
        {
          type: 'urn:agent-identity-broker:tool-call',
          locations: [MCP],
          tool: 'send_payment',
          arguments: { to: 'acme@example.com', amount_eur: 120 },
          risk: 'critical',
        },
      ]),
      () => true,
    ),
  );

  beforeAll(async () => {
    const generated = await generateSigningKey('ES256');
    key = { kid: generated.kid, algorithm: 'ES256', privateKey: importPrivateKey(generated.privateKeyDer) };
  });

  it('puts exactly the approved entry, as one-element array, in the token and the response; its own lifetime', async () => {
    const response = await issuer().issue({
      agent: AGENT,
      principal: 'alice',
      scopes: [],
      grantType: 'urn:openid:params:grant-type:ciba',
      resources: [MCP],
      authorizationDetails: detailJson,
      ttlSeconds: 120,
    });
    const expected = [JSON.parse(detailJson) as unknown];
    expect(response).toEqual({
      access_token: response.access_token,
      token_type: 'Bearer',
      expires_in: 120,
      authorization_details: expected,
    });
    const claims = payload(response.access_token);
    expect(claims).toMatchObject({ sub: 'alice', aud: MCP, client_id: AGENT.id, authorization_details: expected });
    expect(claims.exp).toBe((claims.iat as number) + 120);
  });

  it('issues no authorization_details without them, and the claims expression cannot set the claim', async () => {
    const response = await issuer("{'authorization_details': [{'type': 'forged'}], 'team': 'x'}").issue({
      agent: AGENT,
      principal: 'alice',
      scopes: ['read'],
      grantType: 'authorization_code',
    });
    expect(response).not.toHaveProperty('authorization_details');
    expect(response.expires_in).toBe(3600);
    const claims = payload(response.access_token);
    expect(claims).not.toHaveProperty('authorization_details');
    expect(claims.team).toBe('x');
  });

  it('keeps the approved entry when the claims expression names the claim too', async () => {
    const response = await issuer("{'authorization_details': [{'type': 'forged'}]}").issue({
      agent: AGENT,
      principal: 'alice',
      scopes: [],
      grantType: 'urn:openid:params:grant-type:ciba',
      resources: [MCP],
      authorizationDetails: detailJson,
    });
    expect(payload(response.access_token).authorization_details).toEqual([JSON.parse(detailJson) as unknown]);
  });
});
