import { CLIENT_AUTHENTICATED_ROUTE, OPTIONAL_PRINCIPAL_ROUTE, PrincipalGuard, PUBLIC_ROUTE } from '@broker/auth';
import { ApiError } from '@broker/domain';
import { HOT_ROUTES, type HotRoute } from '@broker/http';
import { AUTHORIZE_STRATEGY, TokenEndpoint } from '@broker/oauth-server';
import { globalGuardsOf, routesOf, runGuard, type NestRoute, modeConfig, testingModules } from '@broker/testing';
import { DiscoveryModule, Reflector } from '@nestjs/core';
import type { TestingModule } from '@nestjs/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { GatewayAuthGuard } from './approvals/gateway-auth.guard';
import { UserApiModule } from './user-api.module';

const CODE = 'authorization_code';
const REFRESH = 'refresh_token';
const CLIENT_CREDENTIALS = 'client_credentials';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** How the principal guard treats a route, by the markers it reads (libs/auth/src/public.decorator.ts). */
type Access = 'public' | 'client-authenticated' | 'optional-principal' | 'principal';

function accessOf(reflector: Reflector, route: NestRoute): Access {
  const targets = [route.handler, route.controller];
  if (reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return 'public';
  if (reflector.getAllAndOverride<boolean>(CLIENT_AUTHENTICATED_ROUTE, targets)) return 'client-authenticated';
  if (reflector.getAllAndOverride<boolean>(OPTIONAL_PRINCIPAL_ROUTE, targets)) return 'optional-principal';
  return 'principal';
}

/** A request with no principal: no header, no cookie, from a peer outside the trusted sources. */
function anonymousRequest(route: NestRoute): Record<string, unknown> {
  return {
    method: route.route.split(' ')[0],
    headers: {},
    headersDistinct: {},
    socket: { remoteAddress: '192.0.2.10' },
  };
}

describe('UserApiModule compiled with @nestjs/testing', () => {
  const modules = testingModules((runtime) => [UserApiModule.forRuntime(runtime), DiscoveryModule]);
  const compile = (config: Record<string, unknown> = {}): Promise<TestingModule> => modules.compile(config);

  /**
   * The mode's strategies as this application's graph binds them (each class in detail:
   * libs/oauth-server/src/mode-strategies.spec.ts): the authorize strategy, and the grant
   * types the token endpoint dispatches, an enterprise IdP adding the ID-JAG grant.
   */
  it.each([
    {
      mode: 'local',
      enterprise: false,
      authorize: 'LocalAuthorize',
      grants: [CODE, REFRESH, CLIENT_CREDENTIALS, TOKEN_EXCHANGE],
    },
    {
      mode: 'local',
      enterprise: true,
      authorize: 'LocalAuthorize',
      grants: [CODE, REFRESH, CLIENT_CREDENTIALS, TOKEN_EXCHANGE, JWT_BEARER],
    },
    { mode: 'proxy', enterprise: false, authorize: 'ProxyAuthorize', grants: [CODE, TOKEN_EXCHANGE] },
    {
      mode: 'hybrid',
      enterprise: false,
      authorize: 'HybridAuthorize',
      grants: [CODE, REFRESH, CLIENT_CREDENTIALS, TOKEN_EXCHANGE],
    },
    {
      mode: 'hybrid',
      enterprise: true,
      authorize: 'HybridAuthorize',
      grants: [CODE, REFRESH, CLIENT_CREDENTIALS, TOKEN_EXCHANGE, JWT_BEARER],
    },
  ] as const)(
    "compiles in $mode mode (enterprise IdP: $enterprise): $authorize and the mode's grants",
    async ({ mode, enterprise, authorize, grants }) => {
      const moduleRef = await compile(modeConfig(mode, { enterprise }));
      expect((moduleRef.get<object>(AUTHORIZE_STRATEGY).constructor as { name: string }).name).toBe(authorize);
      expect(moduleRef.get(TokenEndpoint).grantTypes).toEqual(grants);
    },
  );

  describe('routes', () => {
    let moduleRef: TestingModule;
    let routes: NestRoute[];
    let reflector: Reflector;

    beforeAll(async () => {
      moduleRef = await compile();
      routes = routesOf(moduleRef);
      reflector = moduleRef.get(Reflector);
    });

    function routesWith(access: Access): string[] {
      return routes.filter((route) => accessOf(reflector, route) === access).map((route) => route.route);
    }

    it('every route passes the principal guard first, the one global guard', () => {
      expect(routes.length).toBeGreaterThan(30);
      expect(globalGuardsOf(moduleRef).map((guard) => guard.constructor)).toEqual([PrincipalGuard]);
    });

    it('the public routes are exactly health, the JWKS and the authorization server metadata', () => {
      expect(routesWith('public')).toEqual([
        'GET /.well-known/oauth-authorization-server',
        'GET /health',
        'GET /oauth2/jwks.json',
      ]);
    });

    it("the routes that authenticate their caller themselves are the token, revocation, introspection and backchannel authentication endpoints, the gateway approvals and an authorization request's wait", () => {
      expect(routesWith('client-authenticated')).toEqual([
        'GET /api/approvals',
        'POST /api/approvals',
        'POST /api/approvals/:id/consume',
        'GET /api/authorization-requests/:id/state',
        'POST /oauth2/bc-authorize',
        'POST /oauth2/introspect',
        'POST /oauth2/revoke',
        'POST /oauth2/token',
      ]);
      expect(routesWith('optional-principal')).toEqual(['GET /api/third-party/:serviceId/oauth2/callback']);
    });

    it('the gateway routes, and only they, carry the gateway guard; no other route has a guard of its own', () => {
      const guarded = routes.filter((route) => route.guards.length > 0);
      expect(guarded.map((route) => route.route)).toEqual([
        'GET /api/approvals',
        'POST /api/approvals',
        'POST /api/approvals/:id/consume',
        'GET /api/authorization-requests/:id/state',
      ]);
      for (const route of guarded) {
        expect(route.guards).toEqual([GatewayAuthGuard]);
        expect(['ApprovalsGatewayController', 'AuthorizationRequestsGatewayController']).toContain(
          route.controller.name,
        );
      }
    });

    it('the principal guard refuses every other route without a principal (401) and lets the marked ones through', async () => {
      const guard = globalGuardsOf(moduleRef)[0] as PrincipalGuard;
      const principalRoutes = routesWith('principal');
      expect(principalRoutes).toContain('GET /oauth2/authorize');
      expect(principalRoutes).toContain('GET /api/me');
      for (const route of routes) {
        const verdict = await runGuard(guard, route, anonymousRequest(route));
        if (accessOf(reflector, route) === 'principal') {
          expect(verdict, route.route).toBeInstanceOf(ApiError);
          expect((verdict as ApiError).code, route.route).toBe('unauthorized');
        } else {
          expect(verdict, route.route).toBe(true);
        }
      }
    });

    it('the hot routes, answered before Nest, are the token, JWKS, revocation and introspection endpoints, each also a Nest route', () => {
      const hot = moduleRef.get<HotRoute[]>(HOT_ROUTES).map((route) => `${route.method} ${route.path}`);
      expect(hot).toEqual([
        'POST /oauth2/token',
        'GET /oauth2/jwks.json',
        'POST /oauth2/revoke',
        'POST /oauth2/introspect',
      ]);
      // A request with a query string takes the ordinary route, which must then exist.
      for (const route of hot) expect(routes.map((r) => r.route)).toContain(route);
    });
  });

  it("closing a compiled module leaves the runtime's database open (both servers share it)", async () => {
    const before = await modules.test.runtime.database.installation();
    const moduleRef = await compile();
    await modules.close(moduleRef);
    expect((await modules.test.runtime.database.installation()).id).toBe(before.id);
  });
});
