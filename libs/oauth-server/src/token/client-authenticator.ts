import { isCanonicalUuid, OAuthError, type Agent } from '@broker/domain';
import { AgentRepository } from '@broker/persistence';
import { Injectable } from '@nestjs/common';
import { CimdClients } from '../cimd/cimd-clients';
import { secretMatches } from '../client-credentials/client-credentials.service';
import { presentedClient } from './client-authentication';
import type { TokenForm } from './token-form';

/** An authenticated (or, for public agents, identified) client of the token endpoint. */
export interface AuthenticatedClient {
  readonly agent: Agent;
  readonly confidential: boolean;
}

/**
 * Client authentication at the token endpoint (RFC 6749 §2.3): an agent with
 * broker-issued credentials must present its secret (Basic or post); an agent without
 * credentials is public and identified by `client_id` alone, where the grant allows it.
 * The agent and its credential digest are read in one query.
 */
@Injectable()
export class ClientAuthenticator {
  constructor(
    private readonly agents: AgentRepository,
    private readonly cimd: CimdClients,
  ) {}

  async authenticate(authorization: string | undefined, form: TokenForm, options: { allowPublic: boolean }): Promise<AuthenticatedClient> {
    const presented = presentedClient(authorization, form);
    if (this.cimd.accepts(presented.clientId)) {
      // A metadata-document client has no secret with the broker: public, PKCE-bound.
      if (!options.allowPublic || presented.clientSecret !== undefined) throw new OAuthError('invalid_client', 'client authentication failed');
      return { agent: await this.cimd.agentFor(presented.clientId as string), confidential: false };
    }
    const clientId = presented.clientId?.toLowerCase();
    if (clientId === undefined || !isCanonicalUuid(clientId)) throw new OAuthError('invalid_client', 'unknown client');
    const client = await this.agents.findClient(clientId);
    if (client === undefined) throw new OAuthError('invalid_client', 'unknown client');
    const { agent, secretSha256 } = client;
    if (secretSha256 === null) {
      if (!options.allowPublic) throw new OAuthError('invalid_client', 'client authentication failed');
      if (presented.clientSecret !== undefined) throw new OAuthError('invalid_client', 'client authentication failed');
      return { agent, confidential: false };
    }
    if (presented.clientSecret === undefined || !secretMatches(secretSha256, presented.clientSecret)) {
      throw new OAuthError('invalid_client', 'client authentication failed');
    }
    return { agent, confidential: true };
  }
}
