import { ApiClient, freePort, http, startTestBroker, type TestBroker } from '@broker/testing';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCreated } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const REDIRECT = 'https://agent.example.com/cb';
const CONSENT_UI = 'https://consent.example.com';
const MCP = 'https://mcp.example.com/mcp';
/** Registered, but in none of the agent's permission sets. */
const MCP_UNCOVERED = 'https://mcp-uncovered.example.com/mcp';
/** Nobody registered it: neither a protected resource nor a service's. */
const MCP_UNREGISTERED = 'https://mcp-unregistered.example.com/mcp';
const MAIL_API = 'https://mail.example.com/api';
const FILES_API = 'https://files.example.com/api';
const UPSTREAM_CLIENT = 'agent-at-upstream';
const insecure = { [oauth.allowInsecureRequests]: true };

/** One authorization request of the walk: its parameters and the error it must end in at the redirect_uri. */
interface RedirectCase {
  readonly name: string;
  readonly error: string;
  readonly clientId: () => string;
  readonly params: Readonly<Record<string, string | readonly string[]>>;
}

/** The proxy settings of an upstream that is never contacted: no request of this file goes upstream. */
function upstreamConfig(mode: 'proxy' | 'hybrid', upstream: string): Record<string, unknown> {
  return {
    mode,
    proxy: {
      upstream_issuer_uri: upstream,
      upstream_authorize_endpoint: `${upstream}/auth`,
      upstream_token_endpoint: `${upstream}/token`,
      upstream_jwks_uri: `${upstream}/jwks`,
      upstream_timeout: '1s',
    },
  };
}

/**
 * RFC 9207 §2: the metadata says `authorization_response_iss_parameter_supported`, so every
 * redirect from the authorization endpoint back to the client names the issuer, an error's as
 * much as a code's (docs/oauth2.md "Authorize"). The walk covers each error the endpoint sends
 * by redirect, read from the code (libs/oauth-server/src/authorize/local-authorize.ts,
 * resource-indicators.ts, resource-consent.ts, authorization-denial.ts,
 * proxy/proxy-authorize.ts): `invalid_request` (a malformed `dpop_jkt`), `invalid_scope` (the
 * agent's `allowed_scopes`; a scope the MCP server does not offer), `invalid_target` (an
 * unregistered MCP server, a malformed resource, an MCP server no permission set covers, a
 * registered one asked with another), `access_denied` (a service resource the grant leaves
 * out; the person declining consent) and `server_error` (proxy: no upstream client id). None
 * is `login_required` or `consent_required`: `prompt` is not read. Each must carry `iss`, and
 * oauth4webapi (which checks it) must report the real error rather than a missing `iss`. The
 * errors answered as JSON before or instead of a redirect (`invalid_client`,
 * `invalid_redirect_uri`, `unsupported_response_type`, `invalid_request` for PKCE) are checked
 * to stay JSON, never at the redirect_uri.
 */
describe.each([{ mode: 'local' as const }, { mode: 'proxy' as const }, { mode: 'hybrid' as const }])(
  'every authorization redirect names the issuer (RFC 9207) in $mode mode',
  ({ mode }) => {
    let broker: TestBroker;
    let base: string;
    let as: oauth.AuthorizationServer;
    /** An agent without an upstream client id: served locally (local, hybrid), `server_error` in proxy mode. */
    let local: string;
    /** An agent with an upstream client id (proxy, hybrid). */
    let proxied: string;

    beforeAll(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      const upstream = `http://127.0.0.1:${await freePort()}`;
      broker = await startTestBroker({
        servers: BOTH_SERVERS,
        config: {
          server: { enduser: { port, public_url: base, consent_ui_url: CONSENT_UI } },
          oauth2_authorization_server: mode === 'local' ? { mode } : upstreamConfig(mode, upstream),
        },
      });
      const admin = new ApiClient(broker.url('admin'));
      const created = (path: string, body: Record<string, unknown>): Promise<string> => adminCreated(admin, path, body);
      const mcp = await created('/api/resources', {
        display_name: 'Tracker MCP',
        resource_uri: MCP,
        scopes: [{ scope: 'tools.read', description: 'Read your tickets' }],
      });
      await created('/api/resources', {
        display_name: 'Uncovered MCP',
        resource_uri: MCP_UNCOVERED,
        scopes: [{ scope: 'tools.read', description: 'Read' }],
      });
      const service = async (name: string, resource: string): Promise<string> =>
        created('/api/services', {
          display_name: name,
          client_id: name.toLowerCase(),
          issuer_uri: 'https://idp.example.com',
          authorization_endpoint: 'https://idp.example.com/a',
          token_endpoint: 'https://idp.example.com/t',
          protected_resources: [resource],
        });
      const mail = await service('Mail', MAIL_API);
      const files = await service('Files', FILES_API);
      const setMcp = await created('/api/permission-sets', {
        name: 'Tracker',
        resource_scopes: [{ resource_id: mcp, scopes: ['tools.read'] }],
      });
      const setMail = await created('/api/permission-sets', {
        name: 'Mail',
        service_scopes: [{ service_id: mail, scopes: ['mail.read'] }],
      });
      const setFiles = await created('/api/permission-sets', {
        name: 'Files',
        service_scopes: [{ service_id: files, scopes: ['files.read'] }],
      });
      const agent = (upstreamClientId: string | undefined): Promise<string> =>
        created('/api/agents', {
          display_name: upstreamClientId === undefined ? 'Local agent' : 'Proxied agent',
          ...(upstreamClientId === undefined ? {} : { client_id: upstreamClientId }),
          redirect_uris: [REDIRECT],
          allowed_scopes: ['tools.read', 'tools.write', 'mail.read', 'files.read', 'offline_access'],
          permission_sets: [setMcp, setMail, setFiles].map((id) => ({
            permission_set_id: id,
            requirement_type: 'optional',
          })),
        });
      local = await agent(undefined);
      proxied = await agent(UPSTREAM_CLIENT);
      // Alice delegated the mail service (not files) to the local agent; Bob delegated nothing.
      const grant = await new ApiClient(base, ALICE).post(`/api/consent/agents/${local}/grants`, {
        granted_permission_sets: { [setMail]: [mail] },
      });
      expect(grant.status, grant.text).toBe(201);
      const issuer = new URL(base);
      as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
      );
      expect(as.authorization_response_iss_parameter_supported).toBe(true);
    });

    afterAll(async () => {
      await broker?.stop();
    });

    /** `GET /oauth2/authorize` as `principal` with valid PKCE and `state`, plus `params`. */
    async function authorize(
      clientId: string,
      params: Readonly<Record<string, string | readonly string[]>>,
      principal = ALICE,
    ): Promise<{ status: number; location: URL | undefined; state: string; text: string }> {
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint as string);
      const base: Record<string, string> = {
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      };
      for (const [name, value] of Object.entries({ ...base, ...params })) {
        url.searchParams.delete(name);
        for (const item of typeof value === 'string' ? [value] : value) url.searchParams.append(name, item);
      }
      const response = await http(url.toString(), { headers: { 'x-remote-user': principal } });
      const location = response.headers.location;
      return {
        status: response.status,
        location: location === undefined ? undefined : new URL(location),
        state,
        text: response.text,
      };
    }

    /** The redirect is the client's, names the issuer, keeps the state, and oauth4webapi reports `error` itself. */
    function expectErrorRedirect(location: URL | undefined, state: string, error: string): void {
      expect(location, error).toBeDefined();
      const at = location as URL;
      expect(`${at.origin}${at.pathname}`).toBe(REDIRECT);
      expect(at.searchParams.get('error')).toBe(error);
      expect(at.searchParams.getAll('iss')).toEqual([as.issuer]);
      expect(at.searchParams.get('state')).toBe(state);
      let thrown: unknown;
      try {
        oauth.validateAuthResponse(as, { client_id: 'any' }, at, state);
      } catch (caught) {
        thrown = caught;
      }
      expect(thrown, error).toBeInstanceOf(oauth.AuthorizationResponseError);
      expect((thrown as oauth.AuthorizationResponseError).error).toBe(error);
    }

    const disallowedScope: RedirectCase = {
      name: "a scope outside the agent's allowed_scopes",
      error: 'invalid_scope',
      clientId: () => local,
      params: { scope: 'admin.everything' },
    };
    const localCases: readonly RedirectCase[] = [
      {
        name: 'a malformed dpop_jkt (RFC 9449 §10)',
        error: 'invalid_request',
        clientId: () => local,
        params: { dpop_jkt: 'not a thumbprint' },
      },
      disallowedScope,
      {
        name: 'a scope the MCP server does not offer',
        error: 'invalid_scope',
        clientId: () => local,
        params: { resource: MCP, scope: 'tools.write' },
      },
      {
        name: 'an unregistered MCP server as resource',
        error: 'invalid_target',
        clientId: () => local,
        params: { resource: MCP_UNREGISTERED },
      },
      {
        name: 'a resource with a fragment',
        error: 'invalid_target',
        clientId: () => local,
        params: { resource: `${MCP}#x` },
      },
      {
        name: "an MCP server none of the agent's permission sets covers",
        error: 'invalid_target',
        clientId: () => local,
        params: { resource: MCP_UNCOVERED },
      },
      {
        name: 'a registered MCP server asked with another resource',
        error: 'invalid_target',
        clientId: () => local,
        params: { resource: [MCP, MAIL_API] },
      },
      {
        name: "a service's resource the person's grant leaves out",
        error: 'access_denied',
        clientId: () => local,
        params: { resource: FILES_API },
      },
    ];
    const proxiedCases: readonly RedirectCase[] = [
      {
        name: "a scope outside the proxied agent's allowed_scopes",
        error: 'invalid_scope',
        clientId: () => proxied,
        params: { scope: 'admin.everything' },
      },
    ];
    const noUpstreamCase: RedirectCase = {
      name: 'an agent without an upstream client id',
      error: 'server_error',
      clientId: () => local,
      params: {},
    };
    const cases: readonly RedirectCase[] =
      mode === 'local'
        ? localCases
        : mode === 'proxy'
          ? [...proxiedCases, disallowedScope, noUpstreamCase]
          : [...localCases, ...proxiedCases];

    it.each(cases.map((item) => [item.name, item] as const))('%s: the error redirect carries iss', async (_, item) => {
      const { status, location, state, text } = await authorize(item.clientId(), item.params);
      expect(status, text).toBe(302);
      expectErrorRedirect(location, state, item.error);
    });

    // A proxied agent never sees the broker's consent page nor its codes: these are the local and hybrid modes'.
    if (mode !== 'proxy') {
      it('a declined consent (access_denied) carries iss', async () => {
        const { status, location, state } = await authorize(local, { scope: 'mail.read' }, BOB);
        expect(status).toBe(302);
        const consent = location as URL;
        expect(`${consent.origin}${consent.pathname}`).toBe(`${CONSENT_UI}/agents/${local}`);
        const sessionToken = consent.searchParams.get('session_token') as string;
        const denied = await new ApiClient(base, BOB).post(
          `/api/consent/agents/${local}/deny?session_token=${encodeURIComponent(sessionToken)}`,
        );
        expect(denied.status, denied.text).toBe(200);
        const redirect = new URL(denied.json<{ data: { redirect_url: string } }>().data.redirect_url);
        expectErrorRedirect(redirect, state, 'access_denied');
      });

      it('a code carries iss, and oauth4webapi accepts it', async () => {
        const { status, location, state } = await authorize(local, { scope: 'mail.read' });
        expect(status).toBe(302);
        expect((location as URL).searchParams.getAll('iss')).toEqual([as.issuer]);
        expect(oauth.validateAuthResponse(as, { client_id: local }, location as URL, state).get('code')).toBeTruthy();
      });

      it('does not read prompt: with consent on record prompt=consent gets a code; without, prompt=none gets the consent page', async () => {
        const withConsent = await authorize(local, { scope: 'mail.read offline_access', prompt: 'consent' });
        expect(withConsent.status).toBe(302);
        expect((withConsent.location as URL).searchParams.get('code')).toBeTruthy();
        const withoutConsent = await authorize(local, { scope: 'mail.read', prompt: 'none' }, BOB);
        expect(withoutConsent.status).toBe(302);
        const consent = withoutConsent.location as URL;
        expect(`${consent.origin}${consent.pathname}`).toBe(`${CONSENT_UI}/agents/${local}`);
      });
    }

    it('answers the errors that are never redirected as JSON, with nothing at the redirect_uri', async () => {
      const refused: readonly { clientId?: string; params: Record<string, string>; error: string }[] = [
        { clientId: 'not-a-uuid', params: {}, error: 'invalid_client' },
        { params: { redirect_uri: 'https://evil.example.com/cb' }, error: 'invalid_redirect_uri' },
        { params: { response_type: 'token' }, error: 'unsupported_response_type' },
        { params: { code_challenge_method: 'plain' }, error: 'invalid_request' },
      ];
      for (const { clientId = local, params, error } of refused) {
        const response = await authorize(clientId, params);
        expect(response.status, error).toBe(400);
        expect(response.location, error).toBeUndefined();
        expect((JSON.parse(response.text) as { error: string }).error).toBe(error);
      }
    });
  },
);
