import { CoreModule } from '@broker/bootstrap';
import { type Agent, Clock, OAuthError } from '@broker/domain';
import { FrozenClock, startJwtIssuer, type TestJwtIssuer, modeConfig, testingModules } from '@broker/testing';
import type { TestingModule } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHORIZE_STRATEGY } from './authorize/authorize-strategy';
import { LocalAuthorize } from './authorize/local-authorize';
import { IdJagGrant } from './enterprise/id-jag.grant';
import { JWKS_SOURCE, type JwksSource } from './metadata/jwks-source';
import { UPSTREAM_KEYS_MAX_AGE_MS } from './proxy/upstream-key-set';
import { HybridAuthorizationCodeGrant, HybridAuthorize, HybridJwks } from './proxy/hybrid';
import { ProxyAuthorize } from './proxy/proxy-authorize';
import { ProxyTokenForwarder } from './proxy/proxy-token-forwarder';
import { OAuthServerModule } from './oauth-server.module';
import { SigningKeyService } from './signing-keys/signing-key.service';
import { AuthorizationCodeGrant } from './token/authorization-code.grant';
import { ClientCredentialsGrant } from './token/client-credentials.grant';
import { GRANT_STRATEGIES, type GrantStrategy } from './token/grant-strategy';
import { RefreshTokenGrant } from './token/refresh-token.grant';
import { TokenExchangeGrant } from './token-exchange/token-exchange.grant';
import { TOKEN_LIFECYCLE_SCOPE, type TokenLifecycleScope } from './token-lifecycle/lifecycle-clients';

/** The grant types `POST /oauth2/token` offers, each with the class that serves it, in dispatch order. */
function grants(moduleRef: TestingModule): [string, unknown][] {
  return moduleRef.get<GrantStrategy[]>(GRANT_STRATEGIES).map((grant) => [grant.grantType, grant.constructor]);
}

const AGENT_OF_ITS_OWN = { clientId: null } as Agent;
const UPSTREAM_AGENT = { clientId: 'upstream-client' } as Agent;

/**
 * The mode is bound once, in MODE_STRATEGY_PROVIDERS: for each of `local`, `proxy` and `hybrid`
 * (and with an enterprise IdP trusted or not) the compiled authorization server gives the
 * authorize endpoint, the token endpoint, revocation/introspection and the JWKS the mode's
 * implementations (docs/oauth2.md "OAuth2 authorization server", docs/architecture.md).
 */
describe('mode strategies of the compiled authorization server', () => {
  const modules = testingModules((runtime) => [CoreModule.forRuntime(runtime, 'enduser'), OAuthServerModule]);
  /** The authorization server under `config`, with `clock` in place of the runtime's when given. */
  const compile = (config: Record<string, unknown>, clock?: Clock): Promise<TestingModule> =>
    modules.compile(config, (builder) =>
      clock === undefined ? builder : builder.overrideProvider(Clock).useValue(clock),
    );

  it('local: the local authorize endpoint; code, refresh, client credentials and token exchange; every token of its own', async () => {
    const moduleRef = await compile(modeConfig('local'));
    expect(moduleRef.get(AUTHORIZE_STRATEGY)).toBe(moduleRef.get(LocalAuthorize));
    expect(grants(moduleRef)).toEqual([
      ['authorization_code', AuthorizationCodeGrant],
      ['refresh_token', RefreshTokenGrant],
      ['client_credentials', ClientCredentialsGrant],
      ['urn:ietf:params:oauth:grant-type:token-exchange', TokenExchangeGrant],
    ]);
    const scope = moduleRef.get<TokenLifecycleScope>(TOKEN_LIFECYCLE_SCOPE);
    expect([scope.open, scope.servesAgent(AGENT_OF_ITS_OWN), scope.servesAgent(UPSTREAM_AGENT)]).toEqual([
      true,
      true,
      true,
    ]);
    // The JWKS is the broker's own keys, nothing else.
    const signingKeys = moduleRef.get(SigningKeyService);
    await signingKeys.add('ES256', 'mode-strategies-spec');
    expect(await moduleRef.get<JwksSource>(JWKS_SOURCE).keySet()).toEqual(await signingKeys.jwks());
  });

  it('proxy: the upstream authorize redirect; the code forwarded upstream and token exchange only; no revocation or introspection', async () => {
    const moduleRef = await compile(modeConfig('proxy'));
    expect(moduleRef.get(AUTHORIZE_STRATEGY)).toBe(moduleRef.get(ProxyAuthorize));
    expect(grants(moduleRef)).toEqual([
      ['authorization_code', ProxyTokenForwarder],
      ['urn:ietf:params:oauth:grant-type:token-exchange', TokenExchangeGrant],
    ]);
    const scope = moduleRef.get<TokenLifecycleScope>(TOKEN_LIFECYCLE_SCOPE);
    expect([scope.open, scope.servesAgent(AGENT_OF_ITS_OWN), scope.servesAgent(UPSTREAM_AGENT)]).toEqual([
      false,
      false,
      false,
    ]);
  });

  it('hybrid: both authorize ways and a code grant that dispatches per agent; revocation and introspection for its own agents', async () => {
    const moduleRef = await compile(modeConfig('hybrid'));
    expect(moduleRef.get(AUTHORIZE_STRATEGY)).toBeInstanceOf(HybridAuthorize);
    expect(grants(moduleRef)).toEqual([
      ['authorization_code', HybridAuthorizationCodeGrant],
      ['refresh_token', RefreshTokenGrant],
      ['client_credentials', ClientCredentialsGrant],
      ['urn:ietf:params:oauth:grant-type:token-exchange', TokenExchangeGrant],
    ]);
    const scope = moduleRef.get<TokenLifecycleScope>(TOKEN_LIFECYCLE_SCOPE);
    expect([scope.open, scope.servesAgent(AGENT_OF_ITS_OWN), scope.servesAgent(UPSTREAM_AGENT)]).toEqual([
      true,
      true,
      false,
    ]);
    expect(moduleRef.get(JWKS_SOURCE)).toBeInstanceOf(HybridJwks);
  });

  it.each(['local', 'hybrid'] as const)(
    '%s with an enterprise IdP trusted: the ID-JAG (JWT bearer) grant is offered last, after the same grants as without',
    async (mode) => {
      const without = grants(await compile(modeConfig(mode)));
      const moduleRef = await compile(modeConfig(mode, { enterprise: true }));
      expect(grants(moduleRef)).toEqual([...without, ['urn:ietf:params:oauth:grant-type:jwt-bearer', IdJagGrant]]);
    },
  );

  describe('with the clock overridden and the upstream a fake on loopback', () => {
    let upstream: TestJwtIssuer;

    beforeAll(async () => {
      upstream = await startJwtIssuer();
    });

    afterAll(async () => {
      await upstream?.stop();
    });

    it('proxy: the JWKS is the upstream keys, cached until the overriding clock (not the time) says 5 minutes passed', async () => {
      const clock = new FrozenClock('2026-03-01T12:00:00.000Z');
      const moduleRef = await compile(modeConfig('proxy', { jwksUri: upstream.jwksUri }), clock);
      expect(moduleRef.get(Clock)).toBe(clock);
      const jwks = moduleRef.get<JwksSource>(JWKS_SOURCE);
      const first = upstream.publicJwk;
      const fetchesBefore = upstream.fetches();

      expect((await jwks.keySet()).keys).toEqual([first]);
      expect(upstream.fetches()).toBe(fetchesBefore + 1);

      await upstream.rotate();
      clock.advance(UPSTREAM_KEYS_MAX_AGE_MS - 1);
      expect((await jwks.keySet()).keys).toEqual([first]);
      expect(upstream.fetches()).toBe(fetchesBefore + 1);

      clock.advance(1);
      expect((await jwks.keySet()).keys).toEqual([upstream.publicJwk]);
      expect(upstream.publicJwk.kid).not.toBe(first.kid);
      expect(upstream.fetches()).toBe(fetchesBefore + 2);
    });

    it("hybrid: the JWKS is the union of the broker's own keys and the upstream's", async () => {
      const moduleRef = await compile(modeConfig('hybrid', { jwksUri: upstream.jwksUri }));
      const own = await moduleRef.get(SigningKeyService).add('ES256', 'mode-strategies-spec');
      const local = (await moduleRef.get(SigningKeyService).jwks()).keys;
      expect(local.map((key) => key.kid)).toContain(own.kid);
      expect((await moduleRef.get<JwksSource>(JWKS_SOURCE).keySet()).keys).toEqual([...local, upstream.publicJwk]);
    });

    it('proxy with the upstream unreachable: the JWKS (the upstream keys only) answers temporarily_unavailable, never an empty set', async () => {
      const moduleRef = await compile(modeConfig('proxy'));
      const refused = moduleRef.get<JwksSource>(JWKS_SOURCE).keySet();
      await expect(refused).rejects.toBeInstanceOf(OAuthError);
      await expect(refused).rejects.toMatchObject({ code: 'temporarily_unavailable' });
    });
  });
});
