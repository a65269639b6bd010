import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { isClientDocumentUrl, matchesClientUri, OAuthError, type Agent } from '@broker/domain';
import { AgentRepository } from '@broker/persistence';
import { Inject, Injectable } from '@nestjs/common';
import type { CimdSnapshot } from '../authorization-session/authorization-session-tokens';
import { assertRedirectUriScheme } from '../authorize/authorize-rules';
import { CimdFetchError } from './cimd-fetcher';
import type { ClientMetadata } from './client-metadata';
import { ClientMetadataDocuments } from './client-metadata-documents';

/** A client identified by its metadata document URL, validated for one authorization request. */
export interface CimdClient {
  readonly agent: Agent;
  readonly redirectUri: string;
  readonly snapshot: (requestedScopes: readonly string[]) => CimdSnapshot;
}

/**
 * True when `agent` lists `url` among its `client_uris`, exactly or by a `*` pattern
 * (`matchesClientUri`: the URL in normal form, the pattern's https origin fixed, each `*` one
 * ordinary path segment).
 */
export function listsClientUri(agent: Agent, url: string): boolean {
  return agent.clientUris.some((entry) => matchesClientUri(entry, url));
}

/**
 * Client ID Metadata Documents (local and hybrid, `cimd.enabled`): an HTTPS `client_id`
 * names a document; the URL must be in normal form (`isClientDocumentUrl`: no dot segments,
 * plain or encoded, which the fetch would resolve); the agent is the one whose `client_uris`
 * list the URL (exact, then `*` whole-segment patterns of a fixed https origin; ambiguous or
 * none is `invalid_client`), all before anything is fetched; the document must
 * pass `validateClientMetadata` and its `redirect_uris` must contain the request's.
 */
@Injectable()
export class CimdClients {
  private readonly enabled: boolean;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly agents: AgentRepository,
    private readonly documents: ClientMetadataDocuments,
  ) {
    this.enabled = config.oauth2_authorization_server.cimd.enabled;
  }

  /** True for a client_id this server treats as a metadata document URL. */
  accepts(clientId: string | undefined): boolean {
    return this.enabled && clientId !== undefined && clientId.startsWith('https://');
  }

  /**
   * The agent a document URL belongs to (no fetch), for an authorization request (a signed-in
   * user's). The token endpoint never calls this: it reads the code's agent instead.
   */
  async agentFor(url: string): Promise<Agent> {
    // A URL the fetch would normalise (dot segments, `%2e`, case) is never matched nor fetched.
    if (!isClientDocumentUrl(url))
      throw new OAuthError(
        'invalid_client',
        'client_id is not a client metadata document URL in normal form (https, a path, no dot segments)',
      );
    const agents = await this.agents.list();
    let matches = agents.filter((agent) =>
      agent.clientUris.some((entry) => !entry.includes('*') && matchesClientUri(entry, url)),
    );
    if (matches.length === 0)
      matches = agents.filter((agent) =>
        agent.clientUris.some((entry) => entry.includes('*') && matchesClientUri(entry, url)),
      );
    if (matches.length !== 1)
      throw new OAuthError(
        'invalid_client',
        matches.length === 0 ? 'client_id is not a registered client' : 'client_id matches more than one client',
      );
    return matches[0] as Agent;
  }

  async forAuthorization(url: string, redirectUri: string | undefined): Promise<CimdClient> {
    const agent = await this.agentFor(url);
    let metadata: ClientMetadata;
    try {
      // Validated (client_id, authentication method, redirect and logo URIs) before it was cached.
      metadata = await this.documents.get(url);
    } catch (error) {
      if (!(error instanceof CimdFetchError)) throw error;
      throw new OAuthError('invalid_client', error.message);
    }
    if (redirectUri === undefined || !metadata.redirectUris.includes(redirectUri))
      throw new OAuthError('invalid_redirect_uri', 'redirect_uri is not listed in the client metadata document');
    assertRedirectUriScheme(redirectUri);
    const logo = metadata.logoUri;
    return {
      agent,
      redirectUri,
      snapshot: (requestedScopes) => ({
        client_id_url: url,
        redirect_uri: redirectUri,
        verified_domain: new URL(url).hostname,
        requested_scopes: [...requestedScopes],
        logo_uri: logo,
      }),
    };
  }
}
