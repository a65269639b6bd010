import { generateKeyPairSync, randomUUID, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The gateway's identity provider for the token-exchange benchmark: an ES256 key pair and
 * its JWKS on loopback (the broker's `token_exchange.client_assertion.jwks_uri`; the
 * reference takes the public JWK directly). Tokens are signed with node:crypto directly
 * rather than jose: shape (a) needs tens of thousands of never-used tokens per run, and
 * this is several times faster while producing the same standard compact JWS.
 * (`startJwtIssuer` of @broker/testing keeps its private key to itself.)
 */
export class GatewayIssuer {
  readonly publicJwk: JsonWebKey & { kid: string; alg: string; use: string };
  private readonly privateKey: KeyObject;
  private readonly header: string;
  private readonly idJagHeader: string;

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
  ) {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    this.publicJwk = { ...publicKey.export({ format: 'jwk' }), kid: 'bench-gateway-es256', alg: 'ES256', use: 'sig' };
    this.header = base64url({ alg: 'ES256', kid: this.publicJwk.kid, typ: 'JWT' });
    this.idJagHeader = base64url({ alg: 'ES256', kid: this.publicJwk.kid, typ: 'oauth-id-jag+jwt' });
    server.on('request', (_request, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [this.publicJwk] })),
    );
  }

  static async start(): Promise<GatewayIssuer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new GatewayIssuer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  get jwksUri(): string {
    return `${this.issuer}/jwks`;
  }

  /** The gateway's client assertion (RFC 7523) for the broker at `audience`, valid for an hour, unique `jti`. */
  clientAssertion(audience: string): string {
    return this.sign({ sub: 'bench-gateway', aud: audience });
  }

  /**
   * A user's access token as the gateway forwards it: `sub` the principal, `azp` the agent,
   * `aud` the broker at `audience` (the default of `token_exchange.subject_token.audience`).
   */
  subjectToken(principal: string, agentId: string, audience: string): string {
    return this.sign({ sub: principal, azp: agentId, aud: audience });
  }

  /** Any token of this issuer (`iss`, `iat`, `exp` in an hour and a unique `jti` added). */
  token(claims: Record<string, string>): string {
    return this.sign(claims);
  }

  /**
   * An Identity Assertion JWT Authorization Grant of this issuer (an enterprise IdP's, typ
   * `oauth-id-jag+jwt`), valid for five minutes, unique `jti`: spent once by the broker.
   */
  idJag(claims: Record<string, string>): string {
    return this.sign(claims, this.idJagHeader, 300);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private sign(claims: Record<string, string>, header = this.header, ttlSeconds = 3600): string {
    const now = Math.floor(Date.now() / 1000);
    const input = `${header}.${base64url({ iss: this.issuer, ...claims, iat: now, exp: now + ttlSeconds, jti: randomUUID() })}`;
    // ES256 in JWS is the raw r || s pair (IEEE P1363), not DER.
    return `${input}.${sign('sha256', Buffer.from(input), { key: this.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  }
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
