import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { OAuthError, type Agent } from '@broker/domain';
import { AgentRepository } from '@broker/persistence';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { CimdSnapshot } from '../authorization-session/authorization-session-tokens';
import { CimdFetchError } from './cimd-fetcher';
import { ClientMetadataDocuments } from './client-metadata-documents';

/** Shared-secret methods a metadata-document client may not declare (it has no secret with us). */
const SHARED_SECRET_METHODS = new Set(['client_secret_basic', 'client_secret_post', 'client_secret_jwt']);

/** A client identified by its metadata document URL, validated for one authorization request. */
export interface CimdClient {
  readonly agent: Agent;
  readonly redirectUri: string;
  readonly snapshot: (requestedScopes: readonly string[]) => CimdSnapshot;
}

/** `*` stands for exactly one whole path segment. */
function matchesPattern(pattern: string, url: string): boolean {
  const a = pattern.split('/');
  const b = url.split('/');
  return a.length === b.length && a.every((segment, i) => segment === b[i] || (segment === '*' && (b[i] ?? '') !== ''));
}

/**
 * Client ID Metadata Documents (local and hybrid, `cimd.enabled`): an HTTPS `client_id`
 * names a document; the agent is the one whose `client_uris` list the URL (exact, then
 * `*` whole-segment patterns; ambiguous or none is `invalid_client`); the document's
 * `client_id` must equal the URL, its `redirect_uris` must contain the request's, and it
 * may not declare a shared-secret authentication method.
 */
@Injectable()
export class CimdClients {
  private readonly logger = new Logger(CimdClients.name);
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

  /** The agent a document URL belongs to (no fetch): used by the token endpoint too. */
  async agentFor(url: string): Promise<Agent> {
    const agents = await this.agents.list();
    let matches = agents.filter((agent) => agent.clientUris.includes(url));
    if (matches.length === 0) matches = agents.filter((agent) => agent.clientUris.some((pattern) => pattern.includes('*') && matchesPattern(pattern, url)));
    if (matches.length !== 1) throw new OAuthError('invalid_client', matches.length === 0 ? 'client_id is not a registered client' : 'client_id matches more than one client');
    return matches[0] as Agent;
  }

  async forAuthorization(url: string, redirectUri: string | undefined): Promise<CimdClient> {
    const agent = await this.agentFor(url);
    let document: Record<string, unknown>;
    try {
      document = await this.documents.get(url);
    } catch (error) {
      if (!(error instanceof CimdFetchError)) throw error;
      this.logger.warn(`client metadata document refused: ${error.message}`);
      throw new OAuthError('invalid_client', error.message);
    }
    if (document.client_id !== url) throw new OAuthError('invalid_client', 'the client metadata document names another client_id');
    const method = document.token_endpoint_auth_method;
    if (typeof method === 'string' && SHARED_SECRET_METHODS.has(method)) throw new OAuthError('invalid_client', 'the client metadata document declares a shared-secret authentication method');
    const registered = Array.isArray(document.redirect_uris) ? document.redirect_uris.filter((u): u is string => typeof u === 'string') : [];
    if (redirectUri === undefined || !registered.includes(redirectUri)) throw new OAuthError('invalid_redirect_uri', 'redirect_uri is not listed in the client metadata document');
    const logo = typeof document.logo_uri === 'string' ? document.logo_uri : null;
    return {
      agent,
      redirectUri,
      snapshot: (requestedScopes) => ({ client_id_url: url, redirect_uri: redirectUri, verified_domain: new URL(url).hostname, requested_scopes: [...requestedScopes], logo_uri: logo }),
    };
  }
}
