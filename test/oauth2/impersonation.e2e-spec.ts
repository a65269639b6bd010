import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from '@broker/config';
import { readImpersonationSettings } from '@broker/oauth-server';
import {
  ApiClient,
  freePort,
  http,
  startJwtIssuer,
  startTestBroker,
  testConfig,
  type TestBroker,
  type TestJwtIssuer,
} from '@broker/testing';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  type JSONWebKeySet,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const SUBJECT_AUDIENCE = 'https://apps.example.com';
const ACTOR_AUDIENCE = 'https://ops.example.com';

/** An unsigned JWT (`alg: none`, empty signature), as the unverified-subject profile takes. */
function unsigned(claims: Record<string, unknown>): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iat: now, exp: now + 300, ...claims })}.`;
}

describe('user impersonation (local mode)', () => {
  let gateway: TestJwtIssuer;
  let kiosk: TestJwtIssuer;
  let idp: TestJwtIssuer;
  let broker: TestBroker;
  let base: string;
  let prefix: string;
  let target: string;
  let other: string;
  const consentUi = 'https://consent.example.com';
  const sent: string[] = [];
  let requests = 0;

  beforeAll(async () => {
    [gateway, kiosk, idp] = await Promise.all([
      startJwtIssuer('ES256'),
      startJwtIssuer('ES256'),
      startJwtIssuer('RS256'),
    ]);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    prefix = `${base}/impersonation`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base, consent_ui_url: consentUi } },
        oauth2_authorization_server: {
          impersonation: {
            audience_prefix: prefix,
            rules: [
              {
                name: 'gateway-signed-subject',
                roles: {
                  client_assertion: {},
                  actor: { expected_audience: ACTOR_AUDIENCE },
                  subject: { expected_audience: SUBJECT_AUDIENCE },
                },
                trusted_issuers: [
                  {
                    issuer_uri: gateway.issuer,
                    jwks_uri: gateway.jwksUri,
                    allowed_algorithms: ['ES256'],
                    signs_roles: ['client_assertion'],
                  },
                  {
                    issuer_uri: idp.issuer,
                    jwks_uri: idp.jwksUri,
                    allowed_algorithms: ['RS256'],
                    signs_roles: ['actor', 'subject'],
                  },
                ],
                authorization: {
                  cel: { expression: 'client_assertion.sub == "gateway" && actor_token.sub.startsWith("ops-")' },
                },
              },
              {
                name: 'kiosk-unverified-subject',
                roles: { actor: { expected_audience: ACTOR_AUDIENCE }, subject: { verification: 'none' } },
                trusted_issuers: [
                  {
                    issuer_uri: kiosk.issuer,
                    jwks_uri: kiosk.jwksUri,
                    allowed_algorithms: ['ES256'],
                    signs_roles: ['client_assertion'],
                  },
                  {
                    issuer_uri: idp.issuer,
                    jwks_uri: idp.jwksUri,
                    allowed_algorithms: ['RS256'],
                    signs_roles: ['actor'],
                  },
                ],
                authorization: {
                  cel: {
                    expression: 'client_assertion.sub == "kiosk" && subject_token.email.endsWith("@example.com")',
                  },
                },
              },
            ],
          },
        },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const service = (
      await admin.post('/api/services', {
        display_name: 'Calendar',
        client_id: 'c',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: ['https://calendar.example.com'],
      })
    ).json<{ id: string }>().id;
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'Calendar',
        service_scopes: [{ service_id: service, scopes: ['calendar.read'] }],
      })
    ).json<{ id: string }>().id;
    target = (
      await admin.post('/api/agents', {
        display_name: 'Calendar agent',
        canonical_id: 'calendar-agent',
        allowed_scopes: ['calendar.read'],
        permission_sets: [{ permission_set_id: set }],
      })
    ).json<{ id: string }>().id;
    other = (
      await admin.post('/api/agents', { display_name: 'Other agent', permission_sets: [{ permission_set_id: set }] })
    ).json<{ id: string }>().id;
    for (const user of ['alice', 'carol', 'kim@example.com']) {
      expect(
        (
          await new ApiClient(base, user).post(`/api/consent/agents/${target}/grants`, {
            granted_permission_sets: { [set]: [service] },
          })
        ).status,
      ).toBe(201);
    }
  });

  afterAll(async () => {
    await broker.stop();
    await Promise.all([gateway.stop(), kiosk.stop(), idp.stop()]);
  });

  const clientAssertion = async (issuer = gateway, sub = 'gateway') =>
    remember(await issuer.sign({ sub }, { audience: base }));
  const actorToken = async (sub = 'ops-1', ttlSeconds = 300) =>
    remember(await idp.sign({ sub }, { audience: ACTOR_AUDIENCE, ttlSeconds }));
  const subjectToken = async (sub = 'alice', extra: Record<string, unknown> = {}) =>
    remember(await idp.sign({ sub, email: `${sub}@example.com`, ...extra }, { audience: SUBJECT_AUDIENCE }));
  function remember(token: string): string {
    sent.push(token);
    return token;
  }

  async function signedFields(
    overrides: Record<string, string | undefined> = {},
  ): Promise<Record<string, string | undefined>> {
    return {
      grant_type: EXCHANGE,
      audience: `${prefix}/${target}`,
      client_assertion_type: JWT_BEARER,
      client_assertion: await clientAssertion(),
      actor_token_type: JWT_TYPE,
      actor_token: await actorToken(),
      subject_token_type: JWT_TYPE,
      subject_token: await subjectToken(),
      scope: 'calendar.read',
      ...overrides,
    };
  }

  async function impersonate(fields: Record<string, string | undefined>, extraBody = '') {
    requests += 1;
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.set(k, v);
    const response = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString() + extraBody,
    });
    if (response.status === 200) sent.push(response.json<{ access_token: string }>().access_token);
    return response;
  }

  async function brokerKeys() {
    return createLocalJWKSet((await http(`${base}/oauth2/jwks.json`)).json<JSONWebKeySet>());
  }

  it('issues a locally signed token for the subject with act, agent_id and scope on the signed profile', async () => {
    const response = await impersonate(await signedFields());
    expect(response.status, response.text).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual([
      'access_token',
      'expires_in',
      'issued_token_type',
      'scope',
      'token_type',
    ]);
    expect(body).toMatchObject({
      token_type: 'Bearer',
      issued_token_type: ACCESS,
      scope: 'calendar.read',
      expires_in: 3600,
    });
    const { payload } = await jwtVerify(body.access_token as string, await brokerKeys(), { issuer: base });
    expect(payload).toMatchObject({
      sub: 'alice',
      agent_id: target,
      act: { iss: idp.issuer, sub: 'ops-1' },
      scope: 'calendar.read',
      email: 'alice@example.com',
    });
    // The routing audience is never the token's audience: without a claims expression's aud, the default one (RFC 9068 §3).
    expect(payload.aud).toBe(base);
  });

  it('binds the token to the DPoP key of a proof sent with the request (RFC 9449 §5), and refuses a bad proof', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(publicKey);
    const proof = (htu: string) =>
      new SignJWT({ htm: 'POST', htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .sign(privateKey);
    // Counted and its token kept, as `impersonate` does, for the decision-log test below.
    const withProof = async (dpop: string) => {
      requests += 1;
      const form = new URLSearchParams(
        Object.entries(await signedFields()).filter((entry): entry is [string, string] => entry[1] !== undefined),
      );
      return http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop },
        body: form.toString(),
      });
    };
    const bound = await withProof(await proof(`${base}/oauth2/token`));
    expect(bound.status, bound.text).toBe(200);
    const body = bound.json<{ token_type: string; access_token: string; issued_token_type: string }>();
    sent.push(body.access_token);
    expect(body).toMatchObject({ token_type: 'DPoP', issued_token_type: ACCESS });
    const { payload } = await jwtVerify(body.access_token, await brokerKeys(), { issuer: base });
    expect(payload).toMatchObject({ sub: 'alice', cnf: { jkt: await calculateJwkThumbprint(jwk, 'sha256') } });
    const refused = await withProof(await proof(`${base}/oauth2/introspect`));
    expect(refused.status).toBe(400);
    expect(refused.json<{ error: string }>().error).toBe('invalid_dpop_proof');
  });

  it('gives the same agent_id for the canonical_id suffix as for the UUID', async () => {
    const response = await impersonate(await signedFields({ audience: `${prefix}/calendar-agent` }));
    expect(response.status, response.text).toBe(200);
    expect(decodeJwt(response.json<{ access_token: string }>().access_token).agent_id).toBe(target);
  });

  // docs/admin-api.md "Suspending an agent": no token names a suspended agent; the delegation is kept for its resumption.
  it('refuses a suspended target agent (403 access_denied, no consent page) and issues again once it is resumed', async () => {
    const admin = new ApiClient(broker.url('admin'));
    expect((await admin.put(`/api/agents/${target}/suspension`, {})).status).toBe(200);
    try {
      const refused = await impersonate(await signedFields());
      expect(refused.status, refused.text).toBe(403);
      expect(refused.json()).toEqual({
        error: 'access_denied',
        error_description: 'the agent is suspended by an administrator',
      });
    } finally {
      expect((await admin.delete(`/api/agents/${target}/suspension`)).status).toBe(204);
    }
    const issued = await impersonate(await signedFields());
    expect(issued.status, issued.text).toBe(200);
  });

  it('issues on the unverified-subject profile: an unsigned subject, the email bound by the predicate', async () => {
    const response = await impersonate(
      await signedFields({
        client_assertion: await clientAssertion(kiosk, 'kiosk'),
        subject_token: remember(unsigned({ sub: 'kim@example.com', email: 'kim@example.com' })),
        scope: undefined,
      }),
    );
    expect(response.status, response.text).toBe(200);
    const body = response.json<Record<string, unknown>>();
    expect(body.scope).toBeUndefined();
    expect(decodeJwt(body.access_token as string)).toMatchObject({
      sub: 'kim@example.com',
      email: 'kim@example.com',
      agent_id: target,
      act: { iss: idp.issuer, sub: 'ops-1' },
    });
  });

  it('rejects a signed subject on the unverified path, and an unsigned subject on the signed one', async () => {
    const signedOnKiosk = await impersonate(
      await signedFields({
        client_assertion: await clientAssertion(kiosk, 'kiosk'),
        subject_token: await subjectToken('kim@example.com'),
      }),
    );
    expect(signedOnKiosk.status).toBe(400);
    expect(signedOnKiosk.json<{ error: string }>().error).toBe('invalid_request');
    const unsignedOnGateway = await impersonate(
      await signedFields({ subject_token: remember(unsigned({ sub: 'alice', email: 'alice@example.com' })) }),
    );
    expect(unsignedOnGateway.status).toBe(400);
    expect(unsignedOnGateway.json<{ error: string }>().error).toBe('invalid_request');
  });

  it('never accepts an unsigned client assertion (invalid_client) or actor token (invalid_request)', async () => {
    const client = await impersonate(
      await signedFields({ client_assertion: remember(unsigned({ iss: gateway.issuer, sub: 'gateway', aud: base })) }),
    );
    expect(client.status).toBe(401);
    expect(client.json<{ error: string }>().error).toBe('invalid_client');
    const actor = await impersonate(
      await signedFields({ actor_token: remember(unsigned({ iss: idp.issuer, sub: 'ops-1', aud: ACTOR_AUDIENCE })) }),
    );
    expect(actor.status).toBe(400);
    expect(actor.json<{ error: string }>().error).toBe('invalid_request');
  });

  describe('invalid_request forms', () => {
    const cases: [string, (f: Record<string, string | undefined>) => Record<string, string | undefined>, string?][] = [
      ['the bare prefix', (f) => ({ ...f, audience: prefix })],
      ['the prefix with an empty suffix', (f) => ({ ...f, audience: `${prefix}/` })],
      ['an upper-case UUID', (f) => ({ ...f, audience: `${prefix}/${target.toUpperCase()}` })],
      ['extra path segments', (f) => ({ ...f, audience: `${prefix}/${target}/more` })],
      ['a suffix neither UUID nor canonical_id', (f) => ({ ...f, audience: `${prefix}/has%20space` })],
      ['resource present', (f) => ({ ...f, resource: 'https://calendar.example.com' })],
      [
        'requested_token_type other than access token',
        (f) => ({ ...f, requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' }),
      ],
      ['a missing actor token', (f) => ({ ...f, actor_token: undefined })],
      ['the subject typed as access token', (f) => ({ ...f, subject_token_type: ACCESS })],
      ['a subject that is no JWT', (f) => ({ ...f, subject_token: 'not-a-jwt' })],
      ['two audiences', (f) => f, `&audience=${encodeURIComponent(`${prefix}/calendar-agent`)}`],
    ];
    for (const [name, change, extra] of cases) {
      it(`${name} → 400 invalid_request`, async () => {
        const response = await impersonate(change(await signedFields()), extra);
        expect(response.status, response.text).toBe(400);
        expect(response.json<{ error: string }>().error).toBe('invalid_request');
      });
    }
  });

  describe('every malformed audience is 400 invalid_request, recorded as an impersonation_decision', () => {
    const cases: [string, () => string | undefined, string][] = [
      ['the bare prefix', () => prefix, 'audience_bare_prefix'],
      ['the prefix with an empty suffix', () => `${prefix}/`, 'audience_bare_prefix'],
      ['a bare UUID suffix without the prefix', () => target, 'audience_bare_suffix'],
      ['a bare canonical_id suffix without the prefix', () => 'calendar-agent', 'audience_bare_suffix'],
      ['an upper-case UUID suffix', () => `${prefix}/${target.toUpperCase()}`, 'audience_uuid_not_canonical'],
      ['extra path segments', () => `${prefix}/${target}/more`, 'audience_extra_segments'],
      ['a suffix neither UUID nor canonical_id', () => `${prefix}/has%20space`, 'audience_suffix_malformed'],
      ['a look-alike of the prefix', () => `${prefix}x/${target}`, 'audience_outside_prefix'],
      ['a foreign audience', () => 'https://other.example.com/api', 'audience_outside_prefix'],
      ['no audience at all', () => undefined, 'audience_missing'],
    ];
    for (const [name, audience, failure] of cases) {
      it(`${name} → ${failure}`, async () => {
        const response = await impersonate(await signedFields({ audience: audience() }));
        expect(response.status, response.text).toBe(400);
        expect(response.json<{ error: string }>().error).toBe('invalid_request');
        expect(response.text).not.toContain(prefix);
        const decision = broker.logs
          .records()
          .filter((r) => r.event === 'impersonation_decision')
          .at(-1);
        expect(decision).toMatchObject({
          outcome: 'refused',
          oauth_error: 'invalid_request',
          failure,
          routing_audience: audience() ?? null,
          target_agent_id: null,
        });
        expect(decision?.request_id).toBe(String(response.headers.traceresponse).split('-')[1]);
      });
    }
  });

  it('a well-formed suffix of an unregistered agent → 400 invalid_target (UUID and canonical_id)', async () => {
    for (const suffix of ['00000000-0000-4000-8000-000000000000', 'no-such-agent']) {
      const response = await impersonate(await signedFields({ audience: `${prefix}/${suffix}` }));
      expect(response.status).toBe(400);
      expect(response.json<{ error: string }>().error).toBe('invalid_target');
    }
  });

  it('refuses a scope outside the target allowed_scopes without naming it; reserved scopes always pass', async () => {
    const refused = await impersonate(await signedFields({ scope: 'calendar.read calendar.delete-everything' }));
    expect(refused.status).toBe(400);
    expect(refused.json<{ error: string }>().error).toBe('invalid_scope');
    expect(refused.text).not.toContain('calendar.delete-everything');
    const reserved = await impersonate(await signedFields({ scope: 'offline offline_access calendar.read' }));
    expect(reserved.status, reserved.text).toBe(200);
    expect(reserved.json<{ scope: string }>().scope).toBe('offline offline_access calendar.read');
  });

  describe('when no rule matches: access_denied, then invalid_request, then invalid_client', () => {
    it('an untrusted client assertion alone → 401 invalid_client', async () => {
      const stranger = await startJwtIssuer('ES256');
      try {
        const response = await impersonate(
          await signedFields({
            client_assertion: remember(await stranger.sign({ sub: 'gateway' }, { audience: base })),
          }),
        );
        expect(response.status).toBe(401);
        expect(response.json<{ error: string }>().error).toBe('invalid_client');
      } finally {
        await stranger.stop();
      }
    });

    it('a trusted client with an expired actor token → 400 invalid_request (over invalid_client of the other rule)', async () => {
      const response = await impersonate(await signedFields({ actor_token: await actorToken('ops-1', -120) }));
      expect(response.status).toBe(400);
      expect(response.json<{ error: string }>().error).toBe('invalid_request');
    });

    it('valid credentials the predicate refuses → 403 access_denied, without error_uri', async () => {
      const response = await impersonate(await signedFields({ actor_token: await actorToken('intern-7') }));
      expect(response.status).toBe(403);
      expect(response.json()).toEqual({
        error: 'access_denied',
        error_description: 'no impersonation rule permits this request',
      });
    });

    it('access_denied of one rule beats invalid_client of another', async () => {
      // The kiosk assertion is untrusted by the first rule; the second rule's predicate refuses the email.
      const response = await impersonate(
        await signedFields({
          client_assertion: await clientAssertion(kiosk, 'kiosk'),
          subject_token: remember(unsigned({ sub: 'eve', email: 'eve@evil.example' })),
        }),
      );
      expect(response.status).toBe(403);
      expect(response.json<{ error: string }>().error).toBe('access_denied');
    });
  });

  it('requires the subject delegation: missing and expired answer the same 403 with the consent page', async () => {
    const missing = await impersonate(await signedFields({ subject_token: await subjectToken('bob') }));
    expect(missing.status).toBe(403);
    expect(missing.json()).toEqual({
      error: 'access_denied',
      error_description: expect.any(String) as unknown,
      error_uri: `${consentUi}/agents/${target}`,
    });
    await broker.broker.runtime.database.dataSource.query(
      `UPDATE grants SET valid_until = now() - interval '1 minute' WHERE principal = 'carol'`,
    );
    // Served from memory on PostgreSQL: the next request must see this write (docs/oauth2.md "The hot path").
    await broker.broker.runtime.database.settleNotifications();
    const expired = await impersonate(await signedFields({ subject_token: await subjectToken('carol') }));
    expect(expired.status).toBe(403);
    expect(expired.json()).toEqual(missing.json());
    // An unverified subject is not exempt.
    const unverified = await impersonate(
      await signedFields({
        client_assertion: await clientAssertion(kiosk, 'kiosk'),
        subject_token: remember(unsigned({ sub: 'nobody@example.com', email: 'nobody@example.com' })),
      }),
    );
    expect(unverified.status).toBe(403);
    expect(unverified.json<{ error_uri: string }>().error_uri).toBe(`${consentUi}/agents/${target}`);
    // A delegation to another agent does not count.
    const otherAgent = await impersonate(await signedFields({ audience: `${prefix}/${other}`, scope: undefined }));
    expect(otherAgent.status).toBe(403);
  });

  it('answers 500 server_error without error_uri when the delegation lookup fails', async () => {
    const database = broker.broker.runtime.database.dataSource;
    await database.query('ALTER TABLE grants RENAME TO grants_unavailable');
    try {
      const response = await impersonate(await signedFields());
      expect(response.status).toBe(500);
      const body = response.json<Record<string, unknown>>();
      expect(body.error).toBe('server_error');
      expect(body.error_uri).toBeUndefined();
    } finally {
      await database.query('ALTER TABLE grants_unavailable RENAME TO grants');
    }
  });

  it('logs one impersonation_decision per request, with the decision and no credential', () => {
    const decisions = broker.logs.records().filter((r) => r.event === 'impersonation_decision');
    expect(decisions).toHaveLength(requests);
    // Even the two-audiences request, refused while reading the form (RFC 6749 §3.2), is recorded.
    expect(decisions.find((d) => d.failure === 'repeated_parameter')).toMatchObject({
      outcome: 'refused',
      oauth_error: 'invalid_request',
      routing_audience: `${prefix}/${target}`,
    });
    const issued = decisions.find((d) => d.outcome === 'issued' && d.rule === 'gateway-signed-subject');
    expect(issued).toMatchObject({
      audit: true,
      routing_audience: `${prefix}/${target}`,
      target_agent_id: target,
      client_issuer: gateway.issuer,
      actor_issuer: idp.issuer,
      subject_issuer: idp.issuer,
      roles: ['client_assertion', 'actor', 'subject'],
      client_id: 'gateway',
      actor: 'ops-1',
      subject: 'alice',
      oauth_error: null,
    });
    expect(issued?.request_id).toMatch(/^[0-9a-f]{32}$/);
    expect(decisions.find((d) => d.failure === 'no_delegation')).toMatchObject({
      outcome: 'refused',
      oauth_error: 'access_denied',
      subject: 'bob',
    });
    expect(broker.logs.leaked(sent)).toEqual([]);
  });
});

describe('impersonation in proxy mode', () => {
  let upstream: Server;
  let upstreamCalls = 0;
  let broker: TestBroker;
  let base: string;

  beforeAll(async () => {
    upstream = createServer((_request, response) => {
      upstreamCalls += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        oauth2_authorization_server: {
          mode: 'proxy',
          proxy: {
            upstream_issuer_uri: up,
            upstream_authorize_endpoint: `${up}/auth`,
            upstream_token_endpoint: `${up}/token`,
            upstream_jwks_uri: `${up}/jwks`,
          },
        },
      },
    });
    base = broker.url('enduser');
  });

  afterAll(async () => {
    await broker.stop();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it('answers 400 invalid_target and never contacts the upstream', async () => {
    const before = upstreamCalls;
    const form = new URLSearchParams({
      grant_type: EXCHANGE,
      audience: `${base}/impersonation/calendar-agent`,
      client_assertion_type: JWT_BEARER,
      client_assertion: 'a.b.c',
      actor_token_type: JWT_TYPE,
      actor_token: 'a.b.c',
      subject_token_type: JWT_TYPE,
      subject_token: 'a.b.c',
    });
    const response = await http(`${base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({
      error: 'invalid_target',
      error_description: 'impersonation is available only in local mode',
    });
    expect(upstreamCalls).toBe(before);
    expect(broker.logs.records().filter((r) => r.event === 'impersonation_decision')).toEqual([
      expect.objectContaining({ outcome: 'refused', oauth_error: 'invalid_target', failure: 'mode' }),
    ]);
  });
});

describe('upstream key set (proxy mode)', () => {
  let upstream: Server;
  let fetches = 0;
  let broker: TestBroker;

  beforeAll(async () => {
    upstream = createServer((_request, response) => {
      fetches += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          keys: [
            {
              kty: 'EC',
              crv: 'P-256',
              x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
              y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
              kid: 'up-1',
              d: 'private-member',
            },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        oauth2_authorization_server: {
          mode: 'proxy',
          proxy: {
            upstream_issuer_uri: up,
            upstream_authorize_endpoint: `${up}/auth`,
            upstream_token_endpoint: `${up}/token`,
            upstream_jwks_uri: `${up}/jwks`,
          },
        },
      },
    });
  });

  afterAll(async () => {
    await broker.stop();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  it('is fetched once, not per request, and republished without private members', async () => {
    for (let i = 0; i < 5; i += 1) {
      const response = await http(`${broker.url('enduser')}/oauth2/jwks.json`);
      expect(response.status).toBe(200);
      expect(response.json()).toEqual({
        keys: [
          {
            kty: 'EC',
            crv: 'P-256',
            x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
            y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
            kid: 'up-1',
          },
        ],
      });
    }
    expect(fetches).toBe(1);
  });
});

describe('impersonation configuration is validated at start-up', () => {
  const issuer = {
    issuer_uri: 'https://idp.example.com',
    jwks_uri: 'https://idp.example.com/jwks',
    signs_roles: ['client_assertion', 'actor', 'subject'],
  };
  const rule = (overrides: Record<string, unknown> = {}) => ({
    name: 'r',
    roles: {},
    trusted_issuers: [issuer],
    authorization: { cel: { expression: 'true' } },
    ...overrides,
  });
  const read =
    (impersonation: Record<string, unknown>, mode = 'local', local: Record<string, unknown> = {}) =>
    () =>
      readImpersonationSettings(
        testConfig({
          oauth2_authorization_server: {
            mode,
            local,
            proxy: {
              upstream_issuer_uri: 'https://up.example.com',
              upstream_authorize_endpoint: 'https://up.example.com/a',
              upstream_token_endpoint: 'https://up.example.com/t',
              upstream_jwks_uri: 'https://up.example.com/j',
            },
            impersonation,
          },
        }),
        'https://broker.example.com',
      );
  const prefix = 'https://broker.example.com/impersonation';
  /** The broker's own issuer as a trusted issuer of one role. */
  const brokerSigns = (role: string) => ({
    issuer_uri: 'https://broker.example.com',
    jwks_uri: 'https://broker.example.com/oauth2/jwks.json',
    signs_roles: [role],
  });

  it('accepts a valid configuration and compiles it', () => {
    expect(read({ audience_prefix: prefix, rules: [rule()] })().rules.map((r) => r.name)).toEqual(['r']);
  });

  it("accepts the broker's own tokens as subjects addressed to an audience other than its default one", () => {
    const subjects = (expected: string, local: Record<string, unknown> = {}) =>
      read(
        {
          audience_prefix: prefix,
          rules: [
            rule({
              roles: { subject: { expected_audience: expected } },
              trusted_issuers: [{ ...issuer, signs_roles: ['client_assertion', 'actor'] }, brokerSigns('subject')],
            }),
          ],
        },
        'local',
        local,
      );
    expect(subjects('https://mcp.example.com/mcp')().rules).toHaveLength(1);
    expect(
      subjects('https://broker.example.com', { default_audience: 'https://api.example.com' })().rules,
    ).toHaveLength(1);
  });

  const bad: [string, () => unknown, RegExp][] = [
    [
      'outside local mode',
      read({ audience_prefix: prefix, rules: [rule()] }, 'proxy'),
      /impersonation is available only in local mode/,
    ],
    [
      'a prefix with a trailing slash',
      read({ audience_prefix: `${prefix}/`, rules: [] }),
      /audience_prefix must not end with a slash/,
    ],
    [
      'a prefix with a query',
      read({ audience_prefix: `${prefix}?a=b`, rules: [] }),
      /audience_prefix must not have a query/,
    ],
    [
      'a prefix with userinfo',
      read({ audience_prefix: 'https://u:p@broker.example.com/i', rules: [] }),
      /audience_prefix must not carry userinfo/,
    ],
    [
      'a relative prefix',
      read({ audience_prefix: '/impersonation', rules: [] }),
      /audience_prefix must be an absolute/,
    ],
    [
      'duplicate rule names',
      read({ audience_prefix: prefix, rules: [rule(), rule()] }),
      /rules\[1\] \(r\)\.name .*unique/,
    ],
    [
      'a signed role no issuer signs',
      read({
        audience_prefix: prefix,
        rules: [rule({ trusted_issuers: [{ ...issuer, signs_roles: ['client_assertion', 'actor'] }] })],
      }),
      /rules\[0\] \(r\)\.trusted_issuers no trusted issuer signs the subject role/,
    ],
    [
      'the broker trusted for client assertions',
      read({
        audience_prefix: prefix,
        rules: [rule({ trusted_issuers: [{ ...issuer, issuer_uri: 'https://broker.example.com' }] })],
      }),
      /never trusted for client assertions/,
    ],
    [
      'the broker trusted for subjects addressed to its default audience (the issuer): all its tokens without a resource',
      read({
        audience_prefix: prefix,
        rules: [
          rule({
            roles: { subject: { expected_audience: 'https://broker.example.com' } },
            trusted_issuers: [{ ...issuer, signs_roles: ['client_assertion', 'actor'] }, brokerSigns('subject')],
          }),
        ],
      }),
      /rules\[0\] \(r\)\.roles\.subject\.expected_audience is the broker's default audience \(https:\/\/broker\.example\.com\)/,
    ],
    [
      'the broker trusted for actors addressed to a configured default_audience',
      read(
        {
          audience_prefix: prefix,
          rules: [
            rule({
              roles: { actor: { expected_audience: 'https://api.example.com' } },
              trusted_issuers: [{ ...issuer, signs_roles: ['client_assertion', 'subject'] }, brokerSigns('actor')],
            }),
          ],
        },
        'local',
        { default_audience: 'https://api.example.com' },
      ),
      /rules\[0\] \(r\)\.roles\.actor\.expected_audience is the broker's default audience/,
    ],
    [
      'an HMAC algorithm',
      read({
        audience_prefix: prefix,
        rules: [rule({ trusted_issuers: [{ ...issuer, allowed_algorithms: ['HS256'] }] })],
      }),
      /allowed_algorithms\[0\]/,
    ],
    [
      'none with a subject audience',
      read({
        audience_prefix: prefix,
        rules: [
          rule({
            roles: { subject: { verification: 'none', expected_audience: 'https://x.example.com' } },
            trusted_issuers: [{ ...issuer, signs_roles: ['client_assertion', 'actor'] }],
            authorization: { cel: { expression: 'subject_token.sub == "a"' } },
          }),
        ],
      }),
      /roles\.subject\.expected_audience is not allowed/,
    ],
    [
      'none with a predicate not reading subject_token',
      read({
        audience_prefix: prefix,
        rules: [
          rule({
            roles: { subject: { verification: 'none' } },
            trusted_issuers: [{ ...issuer, signs_roles: ['client_assertion', 'actor'] }],
            authorization: { cel: { expression: '"subject_token" == "subject_token"' } },
          }),
        ],
      }),
      /must reference subject_token/,
    ],
    [
      'none with an email expression the predicate does not bind',
      read({
        audience_prefix: prefix,
        rules: [
          rule({
            roles: { subject: { verification: 'none', email_expression: 'subject_token.email' } },
            trusted_issuers: [{ ...issuer, signs_roles: ['client_assertion', 'actor'] }],
            authorization: { cel: { expression: 'subject_token.sub == "a"' } },
          }),
        ],
      }),
      /email_expression needs the predicate to bind subject_token.email/,
    ],
    [
      'a predicate that does not compile',
      read({
        audience_prefix: prefix,
        rules: [rule({ authorization: { cel: { expression: 'client_assertion.sub ==' } } })],
      }),
      /authorization\.cel\.expression is not a valid CEL expression/,
    ],
  ];
  for (const [name, attempt, message] of bad) {
    it(`stops start-up for ${name}, naming the rule and key`, () => {
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(message);
    });
  }

  it('takes one value where a list has a natural single form (trusted_issuers, allowed_algorithms, signs_roles)', () => {
    const single = {
      issuer_uri: issuer.issuer_uri,
      jwks_uri: issuer.jwks_uri,
      allowed_algorithms: 'ES256',
      signs_roles: 'client_assertion',
    };
    const other = {
      issuer_uri: 'https://idp2.example.com',
      jwks_uri: 'https://idp2.example.com/jwks',
      allowed_algorithms: ['RS256'],
      signs_roles: ['actor', 'subject'],
    };
    const [first] = read({ audience_prefix: prefix, rules: rule({ trusted_issuers: [single, other] }) })().rules;
    expect(first?.issuers.map((i) => ({ algorithms: i.algorithms, roles: [...i.roles] }))).toEqual([
      { algorithms: ['ES256'], roles: ['client_assertion'] },
      { algorithms: ['RS256'], roles: ['actor', 'subject'] },
    ]);
    const [lone] = read({ audience_prefix: prefix, rules: [rule({ trusted_issuers: issuer })] })().rules;
    expect(lone?.issuers).toHaveLength(1);
    expect(
      read({ audience_prefix: prefix, rules: [rule({ trusted_issuers: { ...issuer, allowed_algorithms: 'HS256' } })] }),
    ).toThrow(/rules\[0\] \(r\)\.trusted_issuers\.allowed_algorithms Invalid option: expected one of/);
  });

  it('examples/config/impersonation.yaml loads and passes every start-up check (signed and unverified-subject profiles)', () => {
    const key = Buffer.alloc(32, 3).toString('base64');
    const { config } = loadConfig(['--config', 'examples/config/impersonation.yaml'], {
      BROKER_KEK_1: key,
      BROKER_JWE_KEY_1: key,
    });
    const settings = readImpersonationSettings(config, config.oauth2_authorization_server.local.issuer_uri ?? '');
    expect(settings.audiencePrefix).toBe('https://broker.example.com/impersonation');
    expect(settings.rules.map((r) => [r.name, r.subject.verification, r.subject.emailOf !== undefined])).toEqual([
      ['support-console', 'jwks', true],
      ['kiosk-unverified-subject', 'none', true],
    ]);
    expect(settings.rules[0]?.issuers.map((i) => [i.issuer, [...i.roles]])).toEqual([
      ['https://gateway.example.com', ['client_assertion']],
      ['https://login.example.com', ['actor', 'subject']],
    ]);
    const predicate = settings.rules[0]?.predicate;
    expect(
      predicate?.({
        client_assertion: { sub: 'support-gateway' },
        actor_token: { sub: 'eve', groups: ['support-agents'] },
        subject_token: { sub: 'alice' },
      }),
    ).toBe(true);
    expect(
      predicate?.({
        client_assertion: { sub: 'support-gateway' },
        actor_token: { sub: 'eve', groups: ['support-agents'] },
        subject_token: { sub: 'eve' },
      }),
    ).toBe(false);
  });

  it('stops the broker itself', async () => {
    await expect(
      startTestBroker({
        servers: BOTH_SERVERS,
        config: { oauth2_authorization_server: { impersonation: { audience_prefix: `${prefix}/`, rules: [] } } },
      }),
    ).rejects.toThrow(/audience_prefix must not end with a slash/);
  });
});
