import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AdminRoleGuard,
  CLIENT_AUTHENTICATED_ROUTE,
  OPTIONAL_PRINCIPAL_ROUTE,
  PrincipalGuard,
  PUBLIC_ROUTE,
} from '@broker/auth';
import { ApiError } from '@broker/domain';
import { HOT_ROUTES } from '@broker/http';
import { AUTHORIZE_STRATEGY, TokenEndpoint } from '@broker/oauth-server';
import { globalGuardsOf, routesOf, runGuard, type NestRoute, modeConfig, testingModules } from '@broker/testing';
import { DiscoveryModule, Reflector } from '@nestjs/core';
import type { TestingModule } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminApiModule } from './admin-api.module';
import { IssuerDiscovery } from './services/issuer-discovery';

/** A third party's authorization server on loopback: its RFC 8414 metadata, and how often it was asked. */
async function startMetadataServer(): Promise<{ issuer: string; requests: string[]; stop(): Promise<void> }> {
  const requests: string[] = [];
  let issuer = '';
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    if (request.url !== '/.well-known/oauth-authorization-server') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    requests,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('AdminApiModule compiled with @nestjs/testing', () => {
  const modules = testingModules((runtime) => [AdminApiModule.forRuntime(runtime), DiscoveryModule]);
  const compile = (config: Record<string, unknown> = {}): Promise<TestingModule> => modules.compile(config);

  // The admin plane binds the same authorization server (signing keys, client credentials, metadata) in each mode.
  it.each([
    { mode: 'local', enterprise: false, authorize: 'LocalAuthorize', grants: 4 },
    { mode: 'local', enterprise: true, authorize: 'LocalAuthorize', grants: 5 },
    { mode: 'proxy', enterprise: false, authorize: 'ProxyAuthorize', grants: 2 },
    { mode: 'hybrid', enterprise: false, authorize: 'HybridAuthorize', grants: 4 },
    { mode: 'hybrid', enterprise: true, authorize: 'HybridAuthorize', grants: 5 },
  ] as const)(
    'compiles in $mode mode (enterprise IdP: $enterprise): $authorize, $grants grant types',
    async ({ mode, enterprise, authorize, grants }) => {
      const moduleRef = await compile(modeConfig(mode, { enterprise }));
      expect((moduleRef.get<object>(AUTHORIZE_STRATEGY).constructor as { name: string }).name).toBe(authorize);
      expect(moduleRef.get(TokenEndpoint).grantTypes).toHaveLength(grants);
      expect(moduleRef.get(TokenEndpoint).grantTypes.includes('urn:ietf:params:oauth:grant-type:jwt-bearer')).toBe(
        enterprise,
      );
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

    function marked(key: string): string[] {
      return routes
        .filter((route) => reflector.getAllAndOverride<boolean>(key, [route.handler, route.controller]))
        .map((route) => route.route);
    }

    it('every route passes the principal guard first, then the role guard, and none has a guard of its own', () => {
      expect(routes.length).toBeGreaterThan(30);
      expect(globalGuardsOf(moduleRef).map((guard) => guard.constructor)).toEqual([PrincipalGuard, AdminRoleGuard]);
      expect(routes.filter((route) => route.guards.length > 0).map((route) => route.route)).toEqual([]);
    });

    it('no route is public but /health and /metrics (which answers trusted sources only); none authenticates otherwise', () => {
      expect(marked(PUBLIC_ROUTE)).toEqual(['GET /health', 'GET /metrics']);
      expect(marked(CLIENT_AUTHENTICATED_ROUTE)).toEqual([]);
      expect(marked(OPTIONAL_PRINCIPAL_ROUTE)).toEqual([]);
    });

    it('the principal guard refuses every other route without a principal (401), the development principal never standing in', async () => {
      const admin = await compile({ development: { principal: 'dev@example.com' } });
      const adminRoutes = routesOf(admin);
      for (const guard of [globalGuardsOf(moduleRef)[0], globalGuardsOf(admin)[0]] as PrincipalGuard[]) {
        for (const route of adminRoutes) {
          const request = { method: route.route.split(' ')[0], headers: {}, headersDistinct: {}, socket: {} };
          const verdict = await runGuard(guard, route, request);
          if (route.route === 'GET /health' || route.route === 'GET /metrics') {
            expect(verdict, route.route).toBe(true);
          } else {
            expect(verdict, route.route).toBeInstanceOf(ApiError);
            expect((verdict as ApiError).code, route.route).toBe('unauthorized');
          }
        }
      }
    });

    it('has no hot routes: the admin plane takes the ordinary pipeline', () => {
      expect(moduleRef.get(HOT_ROUTES)).toEqual([]);
    });
  });

  describe('issuer discovery through the compiled module, against an issuer on loopback', () => {
    let issuer: Awaited<ReturnType<typeof startMetadataServer>>;

    beforeAll(async () => {
      issuer = await startMetadataServer();
    });

    afterAll(async () => {
      await issuer?.stop();
    });

    it('reads the endpoints from the metadata when loopback is an allowed network', async () => {
      const moduleRef = await compile({ third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } } });
      await expect(moduleRef.get(IssuerDiscovery).discover(issuer.issuer)).resolves.toEqual({
        authorizationEndpoint: `${issuer.issuer}/authorize`,
        tokenEndpoint: `${issuer.issuer}/token`,
      });
      expect(issuer.requests).toEqual(['/.well-known/oauth-authorization-server']);
    });

    it('is refused before connecting when it is not (the address guard of the outbound client)', async () => {
      const before = issuer.requests.length;
      const moduleRef = await compile();
      await expect(moduleRef.get(IssuerDiscovery).discover(issuer.issuer)).rejects.toMatchObject({
        code: 'validation failed',
      });
      expect(issuer.requests).toHaveLength(before);
    });
  });
});
