import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const ID_JAG_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';

/** A client of the IdP (an MCP client), and the agent it is at the broker (the ID-JAG's `client_id`). */
export interface EnterpriseIdpClient {
  readonly secret: string;
  readonly brokerClientId: string;
}

/** What an ID-JAG signed by hand says (defaults: a valid ID-JAG of this IdP). */
export interface IdJagOptions {
  readonly sub?: string;
  /** The broker's issuer (required unless `claims` sets `aud`). */
  readonly audience?: string | string[];
  readonly clientId?: string;
  readonly resource?: string | string[];
  readonly scope?: string;
  readonly jti?: string;
  readonly iat?: number;
  /** Seconds from `iat` (default 300). */
  readonly ttlSeconds?: number;
  /** The header's `typ` (default `oauth-id-jag+jwt`); null: none. */
  readonly typ?: string | null;
  /** Extra or replacing claims (`cnf`, `tenant`, `email`, `iss`...). */
  readonly claims?: JWTPayload;
}

/**
 * An enterprise identity provider on loopback, as draft-ietf-oauth-identity-assertion-authz-grant
 * has it: RFC 8414 metadata, its JWKS, and a token endpoint doing the RFC 8693 exchange of an
 * ID token it issued for an Identity Assertion JWT Authorization Grant (ID-JAG) signed with its
 * real key (jose). The broker is told to trust it; a second instance plays an untrusted IdP.
 */
export interface TestEnterpriseIdp {
  readonly issuer: string;
  readonly jwksUri: string;
  /** An ID token of the person `sub` for the IdP client `clientId` (what single sign-on gave the MCP client). */
  idToken(sub: string, clientId: string): Promise<string>;
  /** An ID-JAG signed with the IdP's key, saying what the test chooses. */
  signIdJag(options: IdJagOptions): Promise<string>;
  /** The token exchange requests answered so far (no token in them). */
  readonly exchanges: ReadonlyArray<{
    audience: string | undefined;
    resource: string | undefined;
    scope: string | undefined;
  }>;
  stop(): Promise<void>;
}

async function formOf(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startEnterpriseIdp(
  clients: Readonly<Record<string, EnterpriseIdpClient>>,
): Promise<TestEnterpriseIdp> {
  const { publicKey, privateKey }: { publicKey: CryptoKey; privateKey: CryptoKey } = await generateKeyPair('ES256');
  const kid = `idp-${randomUUID().slice(0, 8)}`;
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  const exchanges: { audience: string | undefined; resource: string | undefined; scope: string | undefined }[] = [];
  let base = '';

  const signIdJag = (options: IdJagOptions): Promise<string> => {
    const iat = options.iat ?? Math.floor(Date.now() / 1000);
    const claims: JWTPayload = {
      iss: base,
      sub: options.sub ?? 'alice',
      ...(options.audience === undefined ? {} : { aud: options.audience }),
      client_id: options.clientId,
      jti: options.jti ?? randomUUID(),
      iat,
      exp: iat + (options.ttlSeconds ?? 300),
      ...(options.resource === undefined ? {} : { resource: options.resource }),
      ...(options.scope === undefined ? {} : { scope: options.scope }),
      ...options.claims,
    };
    const typ = options.typ === undefined ? 'oauth-id-jag+jwt' : options.typ;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid, ...(typ === null ? {} : { typ }) })
      .sign(privateKey);
  };

  const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body) });
  const exchange = async (form: URLSearchParams, authorization: string | undefined) => {
    let clientId = form.get('client_id') ?? '';
    let secret = form.get('client_secret') ?? '';
    if (authorization?.startsWith('Basic ') === true) {
      const [id = '', password = ''] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':');
      [clientId, secret] = [decodeURIComponent(id), decodeURIComponent(password)];
    }
    const client = clients[clientId];
    if (client === undefined || client.secret !== secret) return json(401, { error: 'invalid_client' });
    if (
      form.get('grant_type') !== TOKEN_EXCHANGE ||
      form.get('requested_token_type') !== ID_JAG_TOKEN_TYPE ||
      form.get('subject_token_type') !== ID_TOKEN_TYPE
    )
      return json(400, { error: 'invalid_request' });
    let person: string;
    try {
      const { payload } = await jwtVerify(form.get('subject_token') ?? '', publicKey, {
        issuer: base,
        audience: clientId,
      });
      person = payload.sub as string;
    } catch {
      return json(400, { error: 'invalid_grant' });
    }
    const audience = form.get('audience') ?? undefined;
    const resource = form.get('resource') ?? undefined;
    const scope = form.get('scope') ?? undefined;
    exchanges.push({ audience, resource, scope });
    const idJag = await signIdJag({ sub: person, audience, clientId: client.brokerClientId, resource, scope });
    return json(200, {
      issued_token_type: ID_JAG_TOKEN_TYPE,
      access_token: idJag,
      token_type: 'N_A',
      expires_in: 300,
      ...(scope === undefined ? {} : { scope }),
    });
  };

  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://idp').pathname;
    const answer = async (): Promise<{ status: number; body: string }> => {
      if (request.method === 'GET' && path === '/.well-known/oauth-authorization-server')
        return json(200, {
          issuer: base,
          // RFC 8414 §2: required members (single sign-on itself is not played here).
          authorization_endpoint: `${base}/authorize`,
          response_types_supported: ['code'],
          token_endpoint: `${base}/token`,
          jwks_uri: `${base}/jwks`,
          grant_types_supported: [TOKEN_EXCHANGE],
          token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
        });
      if (request.method === 'GET' && path === '/jwks') return json(200, { keys: [publicJwk] });
      if (request.method === 'POST' && path === '/token')
        return exchange(await formOf(request), request.headers.authorization);
      return json(404, { error: 'not_found' });
    };
    answer().then(
      ({ status, body }) =>
        response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(body),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer: base,
    jwksUri: `${base}/jwks`,
    idToken: (sub, clientId) =>
      new SignJWT({ sub })
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .setIssuer(base)
        .setAudience(clientId)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey),
    signIdJag,
    exchanges,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
