import {
  ApiClient,
  FrozenClock,
  freePort,
  http,
  postgresServerUrl,
  createPostgresDatabase,
  startTestBroker,
  testBackends,
  testKey,
  type HttpResponse,
  type TestBroker,
} from '@broker/testing';
import { randomUUID, type webcrypto } from 'node:crypto';
import {
  calculateJwkThumbprint,
  createRemoteJWKSet,
  exportJWK,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  type JWK,
} from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

/**
 * DPoP (RFC 9449) on the local authorization server, with oauth4webapi's DPoP handle as the
 * client where it can say what a test needs, and proofs made by hand (jose) where a test needs
 * a proof no conforming client would send.
 */

const ALICE = 'alice@example.com';
const REDIRECT = 'https://agent.example.com/cb';
const insecure = { [oauth.allowInsecureRequests]: true };

interface ProofKey {
  readonly pair: webcrypto.CryptoKeyPair;
  readonly jwk: JWK;
  readonly jkt: string;
}

async function proofKey(alg: 'ES256' | 'EdDSA' = 'ES256'): Promise<ProofKey> {
  const pair = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(pair.publicKey);
  return { pair, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}

/** A proof made by hand: the claims and header a test chooses, signed with `key`. */
async function handProof(
  key: ProofKey,
  htu: string,
  options: {
    htm?: string;
    iat?: number;
    jti?: string;
    typ?: string;
    jwk?: JWK;
    nonce?: string;
  } = {},
): Promise<string> {
  const claims: Record<string, unknown> = {
    htm: options.htm ?? 'POST',
    htu,
    jti: options.jti ?? randomUUID(),
    iat: options.iat ?? Math.floor(Date.now() / 1000),
  };
  if (options.nonce !== undefined) claims.nonce = options.nonce;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', typ: options.typ ?? 'dpop+jwt', jwk: options.jwk ?? key.jwk })
    .sign(key.pair.privateKey);
}

function decodeClaims(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe.each(testBackends())('DPoP-bound tokens of the local authorization server ($name)', (backend) => {
  let broker: TestBroker;
  let base: string;
  let tokenEndpoint: string;
  let as: oauth.AuthorizationServer;
  let admin: ApiClient;
  let confidential: { id: string; secret: string };
  let required: { id: string; secret: string };
  let publicAgent: string;

  async function confidentialAgent(name: string, extra: Record<string, unknown> = {}) {
    const id = (await admin.post('/api/agents', { display_name: name, ...extra })).json<{ id: string }>().id;
    const secret = (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
      .client_secret;
    return { id, secret };
  }

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    tokenEndpoint = `${base}/oauth2/token`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        storage: await backend.storage(),
        server: { enduser: { port, public_url: base, consent_ui_url: 'https://consent.example.com' } },
      },
    });
    admin = new ApiClient(broker.url('admin'));
    const alice = new ApiClient(base, ALICE);
    const service = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'm',
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: ['https://mail.example.com'],
      })
    ).json<{ id: string }>().id;
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: service, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>().id;
    confidential = await confidentialAgent('Confidential');
    required = await confidentialAgent('Bound', { dpop_bound_access_tokens: true });
    publicAgent = (
      await admin.post('/api/agents', {
        display_name: 'Public',
        redirect_uris: [REDIRECT],
        permission_sets: [{ permission_set_id: set }],
      })
    ).json<{ id: string }>().id;
    await alice.post(`/api/consent/agents/${publicAgent}/grants`, { granted_permission_sets: { [set]: [service] } });
    const issuer = new URL(base);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  });

  afterAll(async () => {
    await broker.stop();
  });

  /** A raw token request: `client_credentials` for the confidential agent, with `dpop` as the DPoP header. */
  const clientCredentials = (dpop?: string, agent = confidential) =>
    http(tokenEndpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(dpop === undefined ? {} : { dpop }),
      },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: agent.id,
        client_secret: agent.secret,
      }).toString(),
    });

  /** An authorization code for the public agent, its PKCE verifier, and the redirect's state. */
  async function authorize(extra: Record<string, string> = {}): Promise<{ code: URLSearchParams; verifier: string }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint as string);
    const params = {
      client_id: publicAgent,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'mail.read offline_access',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const response = await http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    expect(response.status, response.text).toBe(302);
    const location = new URL(response.headers.location as string);
    return { code: oauth.validateAuthResponse(as, { client_id: publicAgent }, location, state), verifier };
  }

  const publicClient = (): oauth.Client => ({ client_id: publicAgent, token_endpoint_auth_method: 'none' });

  /** Redeems `code` with oauth4webapi, with `dpop` as its DPoP handle when given; the raw answer. */
  const redeem = (code: URLSearchParams, verifier: string, dpop?: oauth.DPoPHandle) =>
    oauth.authorizationCodeGrantRequest(as, publicClient(), oauth.None(), code, REDIRECT, verifier, {
      ...insecure,
      ...(dpop === undefined ? {} : { DPoP: dpop }),
    });

  /** The OAuth error of a 400 answer, from fetch (oauth4webapi) or from `http`. */
  async function oauthError(response: Response | HttpResponse): Promise<{ error: string; error_description: string }> {
    expect(response.status).toBe(400);
    const body: unknown = response instanceof Response ? await response.json() : response.json();
    return body as { error: string; error_description: string };
  }

  it('offers no JWT bearer grant without a trusted enterprise IdP: unsupported_grant_type, no ID-JAG profile', async () => {
    const grant = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
    expect(as.grant_types_supported).not.toContain(grant);
    expect(as.authorization_grant_profiles_supported).toBeUndefined();
    const response = await http(tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: grant,
        assertion: 'x.y.z',
        client_id: confidential.id,
        client_secret: confidential.secret,
      }).toString(),
    });
    expect(response.status).toBe(400);
    expect(response.json<{ error: string }>().error).toBe('unsupported_grant_type');
  });

  it('publishes the proof algorithms it accepts (RFC 9449 §5.1)', () => {
    expect(as.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'EdDSA', 'PS256']));
    expect(as.dpop_signing_alg_values_supported).not.toContain('HS256');
  });

  it("issues client_credentials bound to the proof's key: token_type DPoP, cnf.jkt, and introspection says so", async () => {
    const key = await proofKey();
    const client: oauth.Client = { client_id: confidential.id };
    const DPoP = oauth.DPoP(client, key.pair);
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(confidential.secret),
      new URLSearchParams(),
      { ...insecure, DPoP },
    );
    const token = await oauth.processClientCredentialsResponse(as, client, response);
    expect(token.token_type).toBe('dpop');
    expect(await DPoP.calculateThumbprint()).toBe(key.jkt);
    const { payload } = await jwtVerify(token.access_token, createRemoteJWKSet(new URL(as.jwks_uri as string)), {
      issuer: base,
    });
    expect(payload.cnf).toEqual({ jkt: key.jkt });
    const introspection = await oauth.introspectionRequest(
      as,
      client,
      oauth.ClientSecretBasic(confidential.secret),
      token.access_token,
      insecure,
    );
    expect(await oauth.processIntrospectionResponse(as, client, introspection)).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt: key.jkt },
    });
    // Without a proof the same client still gets a Bearer token, without cnf.
    const bearer = await clientCredentials();
    expect(bearer.status).toBe(200);
    const plain = bearer.json<{ token_type: string; access_token: string }>();
    expect(plain.token_type).toBe('Bearer');
    expect(decodeClaims(plain.access_token)).not.toHaveProperty('cnf');
  });

  it('refuses a replayed proof: one jti of one key buys one token', async () => {
    const key = await proofKey();
    const proof = await handProof(key, tokenEndpoint);
    expect((await clientCredentials(proof)).status).toBe(200);
    const replay = await oauthError(await clientCredentials(proof));
    expect(replay).toEqual({
      error: 'invalid_dpop_proof',
      error_description: 'the DPoP proof was already used (its jti was seen before)',
    });
  });

  it('refuses a proof for another URL or method, out of its time window, or not a DPoP proof at all', async () => {
    const key = await proofKey();
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, Promise<string>, RegExp]> = [
      ['htu of another endpoint', handProof(key, `${base}/oauth2/introspect`), /htu does not match/],
      ['htu of another host', handProof(key, 'https://broker.example.com/oauth2/token'), /htu does not match/],
      ['htm GET', handProof(key, tokenEndpoint, { htm: 'GET' }), /htm does not match/],
      ['iat 2 minutes old', handProof(key, tokenEndpoint, { iat: now - 120 }), /expired/],
      ['iat a minute ahead', handProof(key, tokenEndpoint, { iat: now + 60 }), /in the future/],
      ['typ JWT', handProof(key, tokenEndpoint, { typ: 'JWT' }), /typ dpop\+jwt/],
      [
        'a private key in jwk',
        (async () =>
          handProof(key, tokenEndpoint, { jwk: { ...(await exportJWK(key.pair.privateKey)), alg: 'ES256' } }))(),
        /private key/,
      ],
      [
        "another key's jwk",
        (async () => handProof(key, tokenEndpoint, { jwk: (await proofKey()).jwk }))(),
        /signature/,
      ],
      [
        'HS256',
        new SignJWT({ htm: 'POST', htu: tokenEndpoint, jti: randomUUID(), iat: now })
          .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt' })
          .sign(new Uint8Array(32)),
        /accepted algorithm/,
      ],
      ['not a JWT', Promise.resolve('not-a-proof'), /well-formed/],
    ];
    for (const [name, proof, description] of cases) {
      const refusal = await oauthError(await clientCredentials(await proof));
      expect(refusal.error, name).toBe('invalid_dpop_proof');
      expect(refusal.error_description, name).toMatch(description);
    }
    // Two DPoP headers (Node joins them with a comma): refused as such.
    const twice = await http(tokenEndpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        dpop: [await handProof(key, tokenEndpoint), await handProof(key, tokenEndpoint)],
      },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: confidential.id,
        client_secret: confidential.secret,
      }).toString(),
    });
    expect(twice.status).toBe(400);
    expect(twice.json<{ error_description: string }>().error_description).toBe('more than one DPoP header was sent');
    // An Ed25519 key is as good as a P-256 one (RFC 8037).
    const ed = await proofKey('EdDSA');
    const edProof = await new SignJWT({ htm: 'POST', htu: tokenEndpoint, jti: randomUUID(), iat: now })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'dpop+jwt', jwk: ed.jwk })
      .sign(ed.pair.privateKey);
    const accepted = await clientCredentials(edProof);
    expect(accepted.status, accepted.text).toBe(200);
    expect(decodeClaims(accepted.json<{ access_token: string }>().access_token).cnf).toEqual({ jkt: ed.jkt });
  });

  it('refuses an agent registered with dpop_bound_access_tokens a token without a proof, and binds it with one', async () => {
    const refusal = await oauthError(await clientCredentials(undefined, required));
    expect(refusal).toEqual({
      error: 'invalid_dpop_proof',
      error_description: 'this client must send a DPoP proof (RFC 9449) with its token requests',
    });
    const key = await proofKey();
    const bound = await clientCredentials(await handProof(key, tokenEndpoint), required);
    expect(bound.status, bound.text).toBe(200);
    expect(bound.json<{ token_type: string }>().token_type).toBe('DPoP');
  });

  it('binds a code to the dpop_jkt of its authorization request (RFC 9449 §10)', async () => {
    const key = await proofKey();
    const other = await proofKey();
    const malformed = new URL(as.authorization_endpoint as string);
    for (const [k, v] of Object.entries({
      client_id: publicAgent,
      response_type: 'code',
      redirect_uri: REDIRECT,
      state: 's',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
      dpop_jkt: 'not-a-thumbprint',
    }))
      malformed.searchParams.set(k, v);
    const refused = await http(malformed.toString(), { headers: { 'x-remote-user': ALICE } });
    expect(refused.status).toBe(302);
    expect(new URL(refused.headers.location as string).searchParams.get('error')).toBe('invalid_request');

    // Another key's proof: the code is spent, nothing issued.
    const first = await authorize({ dpop_jkt: key.jkt });
    const wrong = await oauthError(await redeem(first.code, first.verifier, oauth.DPoP(publicClient(), other.pair)));
    expect(wrong.error).toBe('invalid_grant');
    // No proof at all.
    const second = await authorize({ dpop_jkt: key.jkt });
    expect(await oauthError(await redeem(second.code, second.verifier))).toEqual({
      error: 'invalid_dpop_proof',
      error_description: 'this authorization code is bound to a DPoP key (dpop_jkt): send a proof made with it',
    });
    // The named key.
    const third = await authorize({ dpop_jkt: key.jkt });
    const DPoP = oauth.DPoP(publicClient(), key.pair);
    const token = await oauth.processAuthorizationCodeResponse(
      as,
      publicClient(),
      await redeem(third.code, third.verifier, DPoP),
    );
    expect(token.token_type).toBe('dpop');
    expect(decodeClaims(token.access_token).cnf).toEqual({ jkt: key.jkt });
  });

  it("binds a public client's refresh token to the key: refused without it or with another, rotated with it", async () => {
    const key = await proofKey();
    const DPoP = oauth.DPoP(publicClient(), key.pair);
    const { code, verifier } = await authorize();
    const first = await oauth.processAuthorizationCodeResponse(as, publicClient(), await redeem(code, verifier, DPoP));
    const refreshToken = first.refresh_token as string;
    expect(refreshToken).toBeDefined();
    const refresh = (dpop?: oauth.DPoPHandle) =>
      oauth.refreshTokenGrantRequest(as, publicClient(), oauth.None(), refreshToken, {
        ...insecure,
        ...(dpop === undefined ? {} : { DPoP: dpop }),
      });
    expect(await oauthError(await refresh())).toEqual({
      error: 'invalid_dpop_proof',
      error_description: 'this refresh token is bound to a DPoP key: send a proof made with it',
    });
    const stranger = oauth.DPoP(publicClient(), (await proofKey()).pair);
    expect((await oauthError(await refresh(stranger))).error).toBe('invalid_grant');
    // Both refusals left the token current: its holder still refreshes, and the new pair is bound again.
    const next = await oauth.processRefreshTokenResponse(as, publicClient(), await refresh(DPoP));
    expect(next.token_type).toBe('dpop');
    expect(decodeClaims(next.access_token).cnf).toEqual({ jkt: key.jkt });
    const again = await http(tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: publicAgent,
        refresh_token: next.refresh_token as string,
      }).toString(),
    });
    expect(again.json<{ error: string }>().error).toBe('invalid_dpop_proof');
  });

  it('never writes a proof, a token or a client secret to its logs', () => {
    // Every proof and every token of this file is a JWT: none is in any line.
    expect(broker.logs.lines.length).toBeGreaterThan(0);
    expect(broker.logs.text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    expect(broker.logs.leaked([confidential.secret, required.secret])).toEqual([]);
  });
});

describe.each(testBackends())('DPoP server nonces (RFC 9449 §8) ($name)', (backend) => {
  let broker: TestBroker;
  let base: string;
  let as: oauth.AuthorizationServer;
  let agent: { id: string; secret: string };
  const clock = new FrozenClock(new Date());

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      clock,
      config: {
        storage: await backend.storage(),
        server: { enduser: { port, public_url: base } },
        oauth2_authorization_server: { local: { dpop: { nonce: { required: true, lifetime: '5m' } } } },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const id = (await admin.post('/api/agents', { display_name: 'Nonce' })).json<{ id: string }>().id;
    agent = {
      id,
      secret: (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret,
    };
    const issuer = new URL(base);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('asks for its nonce with use_dpop_nonce, accepts it on the retry, and refuses it once expired', async () => {
    const key = await proofKey();
    const client: oauth.Client = { client_id: agent.id };
    // The handle's proofs carry the broker's (frozen) time.
    const DPoP = oauth.DPoP(client, key.pair, {
      [oauth.modifyAssertion]: (_header, payload) => {
        payload.iat = Math.floor(clock.nowMs() / 1000);
      },
    });
    const request = () =>
      oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(agent.secret), new URLSearchParams(), {
        ...insecure,
        DPoP,
      });
    const first = await request();
    expect(first.status, await first.clone().text()).toBe(400);
    expect(await first.clone().json()).toMatchObject({ error: 'use_dpop_nonce' });
    const nonce = first.headers.get('dpop-nonce');
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    let refusal: unknown;
    try {
      await oauth.processClientCredentialsResponse(as, client, first);
    } catch (error) {
      refusal = error;
    }
    expect(oauth.isDPoPNonceError(refusal)).toBe(true);
    // oauth4webapi kept the nonce from the refusal: the retry carries it.
    const retried = await request();
    expect(retried.status).toBe(200);
    expect(retried.headers.get('dpop-nonce')).toBe(nonce);
    expect((await oauth.processClientCredentialsResponse(as, client, retried)).token_type).toBe('dpop');

    // Past its lifetime the nonce is refused, with a new one to use.
    clock.advance(5 * 60_000 + 1000);
    const stale = await request();
    expect(stale.status).toBe(400);
    expect(((await stale.clone().json()) as { error: string }).error).toBe('use_dpop_nonce');
    const fresh = stale.headers.get('dpop-nonce');
    expect(fresh).not.toBe(nonce);
    try {
      await oauth.processClientCredentialsResponse(as, client, stale);
    } catch {
      // the nonce error, as above; the handle now holds the fresh nonce
    }
    expect((await request()).status).toBe(200);
  });
});

/** Two brokers on one PostgreSQL, as two replicas behind one public URL. */
describe.runIf(postgresServerUrl())('DPoP across replicas on one PostgreSQL', () => {
  const PUBLIC = 'https://broker.example.com';
  const replicas: TestBroker[] = [];
  let agent: { id: string; secret: string };

  beforeAll(async () => {
    const connection = await createPostgresDatabase();
    // Replicas share their keys (docs/operating.md): the signing key sealed by one opens on the other, a nonce made by
    // one is accepted by the other.
    const jweKeys = [{ id: 'jwe-1', key: testKey() }];
    const encryption = { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' };
    for (let i = 0; i < 2; i += 1)
      replicas.push(
        await startTestBroker({
          servers: BOTH_SERVERS,
          config: {
            storage: { backend: 'postgres', postgres: { connection_url: connection } },
            server: { enduser: { public_url: PUBLIC } },
            third_party_oauth2: { jwe_keys: jweKeys },
            encryption,
            oauth2_authorization_server: { local: { dpop: { nonce: { required: true } } } },
          },
        }),
      );
    const admin = new ApiClient((replicas[0] as TestBroker).url('admin'));
    const id = (await admin.post('/api/agents', { display_name: 'Replicated' })).json<{ id: string }>().id;
    agent = {
      id,
      secret: (await admin.post(`/api/agents/${id}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret,
    };
  });

  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
  });

  const token = (replica: TestBroker, dpop: string) =>
    http(`${replica.url('enduser')}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: agent.id,
        client_secret: agent.secret,
      }).toString(),
    });

  it("accepts one replica's nonce on the other, and refuses there a proof the first accepted", async () => {
    const [a, b] = replicas as [TestBroker, TestBroker];
    const key = await proofKey();
    const htu = `${PUBLIC}/oauth2/token`;
    const asked = await token(a, await handProof(key, htu));
    expect(asked.json<{ error: string }>().error).toBe('use_dpop_nonce');
    const nonce = asked.headers['dpop-nonce'] as string;
    const proof = await handProof(key, htu, { nonce });
    expect((await token(a, proof)).status).toBe(200);
    const replayed = await token(b, proof);
    expect(replayed.status).toBe(400);
    expect(replayed.json<{ error_description: string }>().error_description).toBe(
      'the DPoP proof was already used (its jti was seen before)',
    );
    const onB = await token(b, await handProof(key, htu, { nonce }));
    expect(onB.status, onB.text).toBe(200);
    expect(onB.json<{ token_type: string }>().token_type).toBe('DPoP');
  });
});
