import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * What the person does with an authorization URL in a browser, as the test plays it: it
 * receives the URL the SDK wants opened and answers with the URL the browser finally lands
 * on, the client's redirect URI with `code`, `state` and `iss`.
 */
export type Browser = (authorizationUrl: URL) => Promise<URL>;

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
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Broker e2e MCP client', redirect_uris: [this.redirect], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] };
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
    this.authorizationUrls.push(authorizationUrl);
    const landing = await this.browser(authorizationUrl);
    if (`${landing.origin}${landing.pathname}` !== this.redirect) throw new Error(`the browser did not come back to the redirect URI: ${landing.origin}${landing.pathname}`);
    const error = landing.searchParams.get('error');
    if (error !== null) throw new Error(`authorization refused: ${error} ${landing.searchParams.get('error_description') ?? ''}`);
    if (landing.searchParams.get('state') !== this.sentState) throw new Error('state mismatch');
    if (landing.searchParams.get('iss') !== this.issuer) throw new Error(`iss mismatch: ${String(landing.searchParams.get('iss'))}`);
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
