import { randomUUID } from 'node:crypto';
import type { Clock } from '@broker/domain';
import type { ServerDefinition } from '@broker/bootstrap';
import type { JWTPayload } from 'jose';
import { http, type HttpResponse } from './http-client';
import { startJwtIssuer, type SignOptions, type TestJwtIssuer } from './jwt-issuer';
import { freePort } from './postgres-cluster';
import { startTestBroker, type TestBroker } from './test-broker';
import { mergeConfigTrees } from './test-config';
import type { TestBackend } from './test-databases';

export interface GatewayFixtureOptions {
  readonly servers: readonly ServerDefinition[];
  /** Merged deeply over the fixture's own config (end-user port and public_url, the gateway's trust anchor). */
  readonly config?: Record<string, unknown>;
  readonly clock?: Clock;
  /** The database the broker runs on (default: a fresh in-memory PGlite). */
  readonly backend?: TestBackend;
  /** An issuer already running, shared by several brokers: `stop()` leaves it running. Default: a new one. */
  readonly issuer?: TestJwtIssuer;
  /** Signing algorithm of a new issuer (default ES256). */
  readonly algorithm?: 'ES256' | 'RS256';
  /**
   * `token_exchange.subject_token.audience`, and the audience `subjectToken()` signs for.
   * Omitted: none configured, so subject tokens are addressed to the broker (`base`), the
   * client assertion's audience.
   */
  readonly subjectAudience?: string;
  /** `sub` of `assertion()` unless its claims say otherwise (default `gateway-1`). */
  readonly gatewaySub?: string;
  /** Lifetime of every token signed (default: the issuer's 300 s). */
  readonly ttlSeconds?: number;
}

/** A broker that trusts a gateway's JWT issuer for token exchange and approvals, and that gateway's tokens. */
export interface GatewayFixture {
  readonly broker: TestBroker;
  readonly issuer: TestJwtIssuer;
  /** The end-user server's base URL: its public_url, the broker's issuer and the client assertions' audience. */
  readonly base: string;
  /**
   * A client assertion from the gateway: `{ sub: gatewaySub, jti: random, ...claims }` for `base`.
   * A claim given as `undefined` is left out (`{ jti: undefined }`: an assertion without jti).
   */
  assertion(claims?: JWTPayload, options?: SignOptions): Promise<string>;
  /** A subject token for `principal` acting through `agentId` (`azp`), for the subject audience; `claims` override. */
  subjectToken(principal: string, agentId: string, claims?: JWTPayload, options?: SignOptions): Promise<string>;
  /**
   * POSTs an RFC 8693 token exchange for `principal` through `agentId` to `base`/oauth2/token: a fresh assertion
   * (without jti) and subject token, `resource`, then `fields` over them; returns the answer and the fields sent
   * (the secrets a test searches logs, metrics and spans for).
   */
  exchange(
    principal: string,
    agentId: string,
    options?: { resource?: string; fields?: Record<string, string>; headers?: Record<string, string> },
  ): Promise<{
    response: HttpResponse;
    fields: Record<string, string> & { readonly client_assertion: string; readonly subject_token: string };
  }>;
  /** Stops the broker, then the issuer unless it was given. */
  stop(): Promise<void>;
}

/**
 * Starts a JWT issuer (the gateway's trust anchor) and a broker on a free end-user port
 * whose `token_exchange.client_assertion` names that issuer: the setup every gateway-facing
 * end-to-end test shares (token exchange, approvals, hostile input).
 */
export async function startGatewayFixture(options: GatewayFixtureOptions): Promise<GatewayFixture> {
  const issuer = options.issuer ?? (await startJwtIssuer(options.algorithm ?? 'ES256'));
  const ownIssuer = options.issuer === undefined;
  try {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const own: Record<string, unknown> = {
      server: { enduser: { port, public_url: base } },
      token_exchange: {
        client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri },
        ...(options.subjectAudience === undefined ? {} : { subject_token: { audience: options.subjectAudience } }),
      },
      ...(options.backend === undefined ? {} : { storage: await options.backend.storage() }),
    };
    const broker = await startTestBroker({
      servers: options.servers,
      clock: options.clock,
      config: mergeConfigTrees(own, options.config ?? {}),
    });
    const ttl: SignOptions = options.ttlSeconds === undefined ? {} : { ttlSeconds: options.ttlSeconds };
    // On a test clock the gateway signs in the broker's time: a clock frozen at the start would otherwise see a
    // token signed a minute later (a slow run) as issued in the future.
    const clock = options.clock;
    const lifetime = (): SignOptions =>
      clock === undefined ? ttl : { ...ttl, now: Math.floor(clock.now().getTime() / 1000) };
    const subjectAudience = options.subjectAudience ?? base;
    const assertion: GatewayFixture['assertion'] = (claims = {}, signOptions = {}) =>
      issuer.sign(
        { sub: options.gatewaySub ?? 'gateway-1', jti: randomUUID(), ...claims },
        { audience: base, ...lifetime(), ...signOptions },
      );
    const subjectToken: GatewayFixture['subjectToken'] = (principal, agentId, claims = {}, signOptions = {}) =>
      issuer.sign(
        { sub: principal, azp: agentId, ...claims },
        { audience: subjectAudience, ...lifetime(), ...signOptions },
      );
    return {
      broker,
      issuer,
      base,
      assertion,
      subjectToken,
      exchange: async (
        principal,
        agentId,
        { resource = 'https://mail.example.com', fields: extra = {}, headers = {} } = {},
      ) => {
        const fields = {
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: await assertion({ jti: undefined }),
          subject_token: await subjectToken(principal, agentId),
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          resource,
          ...extra,
        };
        const response = await http(`${base}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
          body: new URLSearchParams(fields).toString(),
        });
        return { response, fields };
      },
      stop: async () => {
        await broker.stop();
        if (ownIssuer) await issuer.stop();
      },
    };
  } catch (error) {
    if (ownIssuer) await issuer.stop();
    throw error;
  }
}
