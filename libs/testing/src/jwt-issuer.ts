import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface SignOptions {
  /** `exp` this far ahead (default 300 s); null: no `exp` at all. */
  readonly ttlSeconds?: number | null;
  readonly audience?: string | string[];
  readonly iat?: number;
  /** "Now" in seconds since the epoch for `iat` and `exp` (default the real time): a broker on a test clock. */
  readonly now?: number;
  /** The header's `typ` (default none). */
  readonly typ?: string;
}

/** A JWT issuer on loopback: its JWKS served over HTTP, tokens signed with its real key. */
export interface TestJwtIssuer {
  readonly issuer: string;
  readonly jwksUri: string;
  /** A token signed with the issuer's key (header `kid`), `exp` in `ttlSeconds`. */
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  /** JWKS fetches so far (to show keys are cached). */
  fetches(): number;
  /** The current public key (changes on `rotate`). */
  readonly publicJwk: JWK;
  /** Replaces the key pair (new `kid`); the old key disappears from the JWKS. */
  rotate(): Promise<void>;
  stop(): Promise<void>;
}

export async function startJwtIssuer(algorithm: 'ES256' | 'RS256' = 'ES256'): Promise<TestJwtIssuer> {
  let generation = 0;
  const newKey = async (): Promise<{ privateKey: CryptoKey; publicJwk: JWK }> => {
    const { publicKey, privateKey } = await generateKeyPair(algorithm);
    generation += 1;
    return {
      privateKey,
      publicJwk: {
        ...(await exportJWK(publicKey)),
        kid: generation === 1 ? `test-${algorithm.toLowerCase()}` : `test-${algorithm.toLowerCase()}-${generation}`,
        alg: algorithm,
        use: 'sig',
      },
    };
  };
  let { privateKey, publicJwk } = await newKey();
  let fetches = 0;
  const server: Server = createServer((_request, response) => {
    fetches += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer: base,
    jwksUri: `${base}/jwks`,
    get publicJwk() {
      return publicJwk;
    },
    rotate: async () => {
      ({ privateKey, publicJwk } = await newKey());
    },
    fetches: () => fetches,
    sign: (claims, options = {}) => {
      const now = options.now ?? Math.floor(Date.now() / 1000);
      let jwt = new SignJWT(claims)
        .setProtectedHeader({
          alg: algorithm,
          kid: publicJwk.kid,
          ...(options.typ === undefined ? {} : { typ: options.typ }),
        })
        .setIssuer(base)
        .setIssuedAt(options.iat ?? now);
      if (options.ttlSeconds !== null) jwt = jwt.setExpirationTime(now + (options.ttlSeconds ?? 300));
      if (options.audience !== undefined) jwt = jwt.setAudience(options.audience);
      return jwt.sign(privateKey);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
