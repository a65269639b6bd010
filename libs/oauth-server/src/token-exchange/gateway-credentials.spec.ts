import { SystemClock } from '@broker/domain';
import type { AgentRepository, ClientAssertionReplayRepository } from '@broker/persistence';
import { testConfig } from '@broker/testing';
import type { JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { GatewayCredentials, GatewayCredentialsRefused } from './gateway-credentials';
import type { TrustAnchor } from './trust-anchor';

const AGENT = '0af76519-16cd-43dd-8448-eb211c80319c';

function credentials(authorization = 'client_assertion.sub == "gateway"'): GatewayCredentials {
  const config = testConfig({ token_exchange: { authorization: { cel: { expression: authorization } } } });
  // identify and assertAuthorized read only the configured expressions.
  return new GatewayCredentials(
    config,
    {} as TrustAnchor,
    {} as ClientAssertionReplayRepository,
    new SystemClock(),
    {} as AgentRepository,
  );
}

/** Frozen claims (the verifier's cached object) whose property reads are counted: one read per evaluation of an expression. */
function countedClaims(claims: JWTPayload): { readonly claims: JWTPayload; reads: () => number } {
  let reads = 0;
  const target = Object.freeze({ ...claims });
  const proxy = new Proxy(target, {
    get(object, name, receiver) {
      reads += 1;
      return Reflect.get(object, name, receiver) as unknown;
    },
  });
  return { claims: proxy, reads: () => reads };
}

function refusalOf(run: () => unknown): GatewayCredentialsRefused {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayCredentialsRefused) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('GatewayCredentials', () => {
  it('identifies a subject token by the claim expressions, and evaluates them once per verified claims object', () => {
    const gateway = credentials();
    const subject = countedClaims({ sub: ' alice ', azp: AGENT.toUpperCase() });
    expect(gateway.identify(subject.claims)).toEqual({ principal: 'alice', agentId: AGENT });
    const reads = subject.reads();
    expect(gateway.identify(subject.claims)).toEqual({ principal: 'alice', agentId: AGENT });
    expect(subject.reads()).toBe(reads);
    // Another object with the same claims is evaluated on its own.
    expect(gateway.identify({ sub: 'bob', azp: AGENT })).toEqual({ principal: 'bob', agentId: AGENT });
  });

  it('refuses a subject token without a usable agent claim on every call, with the same refusal', () => {
    const gateway = credentials();
    const missing = Object.freeze({ sub: 'alice' });
    const notUuid = Object.freeze({ sub: 'alice', azp: 'not-a-uuid' });
    for (let i = 0; i < 2; i++) {
      expect(refusalOf(() => gateway.identify(missing))).toMatchObject({
        refusal: 'identity_missing',
        message: 'the subject token lacks the principal or agent claim',
      });
      expect(refusalOf(() => gateway.identify(notUuid))).toMatchObject({
        refusal: 'identity_missing',
        message: 'the subject token has no usable agent claim',
      });
      // Claims the verifier has not cached (not frozen) are evaluated each time, with the same outcome.
      expect(refusalOf(() => gateway.identify({ sub: 'alice' }))).toMatchObject({
        refusal: 'identity_missing',
        message: 'the subject token lacks the principal or agent claim',
      });
      expect(refusalOf(() => gateway.assertAuthorized({ sub: 'someone-else' }))).toMatchObject({
        refusal: 'not_authorized',
        message: 'the gateway is not authorized',
      });
    }
  });

  it('decides the authorization expression once per verified assertion, and refuses an unauthorized one on every call', () => {
    const gateway = credentials();
    const allowed = countedClaims({ sub: 'gateway' });
    gateway.assertAuthorized(allowed.claims);
    const reads = allowed.reads();
    gateway.assertAuthorized(allowed.claims);
    expect(allowed.reads()).toBe(reads);
    const other = countedClaims({ sub: 'someone-else' });
    for (let i = 0; i < 2; i++)
      expect(refusalOf(() => gateway.assertAuthorized(other.claims))).toMatchObject({
        refusal: 'not_authorized',
        message: 'the gateway is not authorized',
      });
    // An expression that fails to evaluate (a claim the assertion lacks) refuses too.
    const failing = credentials('client_assertion.team == "ops"');
    for (let i = 0; i < 2; i++)
      expect(refusalOf(() => failing.assertAuthorized(Object.freeze({ sub: 'gateway' })))).toMatchObject({
        refusal: 'not_authorized',
      });
  });
});
