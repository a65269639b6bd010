import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  UnauthorizedError,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { http, startHttpsDocumentServer, type ApiClient, type HttpsDocumentServer } from '@broker/testing';
import { expect } from 'vitest';

/**
 * What the person does with an authorization URL in a browser, as the test plays it: it
 * receives the URL the SDK wants opened and answers with the URL the browser finally lands
 * on, the client's redirect URI with `code`, `state` and `iss`.
 */
export type Browser = (authorizationUrl: URL) => Promise<URL>;

/**
 * A desktop MCP client's Client ID Metadata Document, served over HTTPS on loopback: a public
 * client (`none`) whose one redirect URI is `redirect`; `clientId` is the document's URL.
 */
export async function startClientMetadataDocument(
  redirect: string,
  grantTypes: readonly string[] = ['authorization_code'],
): Promise<{ docs: HttpsDocumentServer; clientId: string }> {
  const docs: HttpsDocumentServer = await startHttpsDocumentServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        client_id: `https://127.0.0.1:${docs.port}${request.url ?? ''}`,
        client_name: 'Desktop MCP client',
        redirect_uris: [redirect],
        token_endpoint_auth_method: 'none',
        grant_types: grantTypes,
        response_types: ['code'],
      }),
    );
  });
  return { docs, clientId: `https://127.0.0.1:${docs.port}/oauth/client-metadata.json` };
}

/** What the person consents to in `consentingBrowser`, and what they saw. */
export interface Consent {
  readonly agentId: string;
  readonly detail: Record<string, unknown>;
}

/** The consent page's data, as far as `allowRequestedResources` reads it. */
interface ConsentDetail {
  readonly permission_sets: readonly { id: string; resources: readonly { resource_id: string }[] }[];
  readonly resources: readonly { id: string; granted: boolean; requested: boolean }[];
}

/**
 * What the console's Allow sends for a request naming MCP servers: for each permission set,
 * the registered resources of it already granted or requested now (incremental consent keeps
 * what was granted and adds what is asked).
 */
export function allowRequestedResources(detail: Record<string, unknown>): Record<string, string[]> {
  const { permission_sets: sets, resources } = detail as unknown as ConsentDetail;
  const wanted = new Set(resources.filter((r) => r.granted || r.requested).map((r) => r.id));
  const grant: Record<string, string[]> = {};
  for (const set of sets) {
    const ids = set.resources.map((r) => r.resource_id).filter((id) => wanted.has(id));
    if (ids.length > 0) grant[set.id] = ids;
  }
  return grant;
}

/**
 * The person in a browser: the broker's redirect to the consent page (`consentUi`), where
 * they read the agent's detail and grant `grant` (or what it computes from the detail) with
 * the session token (the consent page's two end-user API calls), then back through the
 * broker to the client. Each consent given is pushed to `consents`.
 */
export function consentingBrowser(
  person: ApiClient,
  base: string,
  consentUi: string,
  grant: Record<string, unknown> | ((detail: Record<string, unknown>) => Record<string, unknown>),
  consents: Consent[] = [],
): Browser {
  return async (authorizationUrl) => {
    const first = await http(authorizationUrl.href, { headers: { 'x-remote-user': person.principal as string } });
    expect(first.status, first.text).toBe(302);
    const location = new URL(first.headers.location as string);
    if (location.origin !== consentUi) return location;
    const agentId = location.pathname.split('/').at(-1) as string;
    const sessionToken = encodeURIComponent(location.searchParams.get('session_token') as string);
    const detail = await person.get(`/api/consent/agents/${agentId}?session_token=${sessionToken}`);
    expect(detail.status, detail.text).toBe(200);
    const data = detail.json<{ data: Record<string, unknown> }>().data;
    consents.push({ agentId, detail: data });
    const granted = await person.post(`/api/consent/agents/${agentId}/grants?session_token=${sessionToken}`, {
      granted_permission_sets: typeof grant === 'function' ? grant(data) : grant,
    });
    expect(granted.status, granted.text).toBe(201);
    const resumed = await http(new URL(granted.json<{ redirect_url: string }>().redirect_url, base).href, {
      headers: { 'x-remote-user': person.principal as string },
    });
    expect(resumed.status, resumed.text).toBe(302);
    return new URL(resumed.headers.location as string);
  };
}

/**
 * An MCP client's OAuth state, in memory, as a desktop MCP client keeps it for one MCP
 * server: its identity is a Client ID Metadata Document URL (`clientMetadataUrl`), so the
 * SDK registers nothing. `redirectToAuthorization` hands the URL to `browser` and keeps the
 * code of the answer, after checking the `state` it sent and the `iss` (RFC 9207).
 */
export class CimdClientProvider implements OAuthClientProvider {
  /** Every authorization URL the SDK asked to open. */
  readonly authorizationUrls: URL[] = [];
  private information: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;
  private sentState = '';
  private code: string | undefined;

  constructor(
    readonly clientMetadataUrl: string,
    private readonly redirect: string,
    private readonly browser: Browser,
    private readonly issuer: string,
    /**
     * Ask for `offline_access` when the authorization server's metadata lists it in
     * `scopes_supported` (as MCP's 2026-07-28 authorization revision has clients do), so
     * that an expired access token is renewed with the refresh token, without a browser.
     */
    private readonly options: { offlineAccess?: boolean } = {},
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Broker e2e MCP client',
      redirect_uris: [this.redirect],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    };
  }

  state(): string {
    this.sentState = randomBytes(16).toString('base64url');
    return this.sentState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.information;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.information = information;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const scope = authorizationUrl.searchParams.get('scope') ?? '';
    if (
      this.options.offlineAccess === true &&
      this.discovery?.authorizationServerMetadata?.scopes_supported?.includes('offline_access') &&
      !scope.split(' ').includes('offline_access')
    ) {
      authorizationUrl.searchParams.set('scope', [scope, 'offline_access'].filter(Boolean).join(' '));
    }
    this.authorizationUrls.push(authorizationUrl);
    const landing = await this.browser(authorizationUrl);
    if (`${landing.origin}${landing.pathname}` !== this.redirect)
      throw new Error(`the browser did not come back to the redirect URI: ${landing.origin}${landing.pathname}`);
    const error = landing.searchParams.get('error');
    if (error !== null)
      throw new Error(`authorization refused: ${error} ${landing.searchParams.get('error_description') ?? ''}`);
    if (landing.searchParams.get('state') !== this.sentState) throw new Error('state mismatch');
    if (landing.searchParams.get('iss') !== this.issuer)
      throw new Error(`iss mismatch: ${String(landing.searchParams.get('iss'))}`);
    this.code = landing.searchParams.get('code') ?? undefined;
  }

  /** The code of the last authorization response, once. */
  takeCode(): string | undefined {
    const code = this.code;
    this.code = undefined;
    return code;
  }
}

/**
 * Connects an SDK client to the MCP server at `url` the way MCP clients do: the first
 * attempt answers 401, the SDK runs discovery and the authorization request (through the
 * provider's browser), then the code is redeemed with `finishAuth` and the client connects
 * again with the access token.
 */
export async function connectMcpClient(url: string, provider: CimdClientProvider): Promise<Client> {
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: 'broker-e2e', version: '1.0.0' });
  try {
    await client.connect(first);
    return client;
  } catch (error) {
    const code = provider.takeCode();
    if (!(error instanceof UnauthorizedError) || code === undefined) throw error;
    await first.finishAuth(code);
  }
  const again = new Client({ name: 'broker-e2e', version: '1.0.0' });
  await again.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  return again;
}
