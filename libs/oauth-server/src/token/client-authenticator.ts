import { isCanonicalUuid, OAuthError, type Agent } from '@broker/domain';
import { AgentRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { CimdClients, listsClientUri } from '../cimd/cimd-clients';
import { secretMatches } from '../client-credentials/client-credentials.service';
import { presentedClient, type PresentedClient } from './client-authentication';
import type { TokenForm } from './token-form';

/** An authenticated (or, for public agents, identified) client of the token endpoint. */
export interface AuthenticatedClient {
  readonly agent: Agent;
  readonly confidential: boolean;
  /** The digest of the agent's current secret (null: a public client): refresh tokens are bound to it. */
  readonly credentialSha256: Buffer | null;
}

/** RFC 6749 §5.2 `error_description` of every refusal for a suspended agent (docs/admin-api.md "Suspending an agent"). */
export const AGENT_SUSPENDED = 'the agent is suspended';

/**
 * Client authentication at the token endpoint (RFC 6749 §2.3): an agent with
 * broker-issued credentials must present its secret (Basic or post); an agent without
 * credentials is public and identified by `client_id` alone, where the grant allows it.
 * The agent and its credential digest are read in one query (cached: `ClientCache`), which
 * carries the agent's suspension too: a suspended agent, once authenticated, is refused
 * `invalid_client` (RFC 6749 §5.2) before its grant is looked at, so nothing is consumed.
 */
@Injectable()
export class ClientAuthenticator {
  constructor(
    private readonly agents: AgentRepository,
    private readonly cimd: CimdClients,
  ) {}

  async authenticate(
    authorization: string | undefined,
    form: TokenForm,
    options: { allowPublic: boolean; allowSuspended?: boolean },
  ): Promise<AuthenticatedClient> {
    return this.authenticatePresented(presentedClient(authorization, form), options);
  }

  /**
   * The metadata document URL when the presented client is one (else undefined). Such a
   * client has no secret with the broker: public, PKCE-bound, and only for the grant that
   * names its agent (`documentClientAgent`), so it is never looked up among all agents here.
   */
  documentUrl(presented: PresentedClient): string | undefined {
    if (!this.cimd.accepts(presented.clientId)) return undefined;
    if (presented.clientSecret !== undefined) throw new OAuthError('invalid_client', 'client authentication failed');
    return presented.clientId;
  }

  /**
   * The agent an authorization code was issued to, when it lists the presenting document
   * URL among its `client_uris`: one cached read by id instead of a scan of every agent
   * (an unauthenticated request can name any URL).
   */
  async documentClientAgent(agentId: string, url: string): Promise<Agent> {
    const agent = (await this.agents.findClient(agentId))?.agent;
    if (agent === undefined || !listsClientUri(agent, url))
      throw new OAuthError('invalid_grant', 'the authorization code was issued to another client');
    // The document client is not suspended, the agent its grant was issued to is: the grant is unusable (RFC 6749 §5.2).
    if (agent.suspension !== null) throw new OAuthError('invalid_grant', AGENT_SUSPENDED);
    return agent;
  }

  /**
   * `allowSuspended`: a suspended agent is authenticated too (revocation, RFC 7009: giving up a
   * token takes nothing); otherwise it is refused once its credentials are checked, so the
   * refusal tells nobody without them that the agent exists.
   */
  async authenticatePresented(
    presented: PresentedClient,
    options: { allowPublic: boolean; allowSuspended?: boolean },
  ): Promise<AuthenticatedClient> {
    const client = await this.identified(presented, options);
    if (client.agent.suspension !== null && options.allowSuspended !== true)
      throw new OAuthError('invalid_client', AGENT_SUSPENDED);
    return client;
  }

  private async identified(
    presented: PresentedClient,
    options: { allowPublic: boolean },
  ): Promise<AuthenticatedClient> {
    // Metadata-document clients are identified through documentUrl, by the grants that allow them.
    if (this.cimd.accepts(presented.clientId)) throw new OAuthError('invalid_client', 'client authentication failed');
    const clientId = presented.clientId?.toLowerCase();
    if (clientId === undefined || !isCanonicalUuid(clientId)) throw new OAuthError('invalid_client', 'unknown client');
    const client = await this.agents.findClient(clientId);
    if (client === undefined) throw new OAuthError('invalid_client', 'unknown client');
    const { agent, secretSha256 } = client;
    if (secretSha256 === null) {
      if (!options.allowPublic) throw new OAuthError('invalid_client', 'client authentication failed');
      if (presented.clientSecret !== undefined) throw new OAuthError('invalid_client', 'client authentication failed');
      return { agent, confidential: false, credentialSha256: null };
    }
    if (presented.clientSecret === undefined || !secretMatches(secretSha256, presented.clientSecret)) {
      throw new OAuthError('invalid_client', 'client authentication failed');
    }
    return { agent, confidential: true, credentialSha256: secretSha256 };
  }
}
