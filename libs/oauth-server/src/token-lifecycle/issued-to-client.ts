import { assertNever, isCanonicalUuid } from '@broker/domain';
import type { TokenStateRepository } from '@broker/persistence';
import type { JWTPayload } from 'jose';
import type { Revoker } from './lifecycle-clients';

/** The client a token was issued to: its agent, and the metadata-document URL it was issued under. */
export interface TokenClient {
  readonly agentId: string;
  /** The Client ID Metadata Document URL the token was issued to; null for the agent's own client id. */
  readonly clientIdUrl: string | null;
}

/**
 * RFC 7009 §2.1 and RFC 7662 §2.1: the token was issued to the requesting client, the one
 * rule of revocation and of an agent's introspection, for access and refresh tokens alike.
 * An agent's own client id has its own tokens only, never those of a metadata-document client
 * it lists (they carry its agent id but are that client's); a document client has the tokens
 * issued to its URL.
 */
export function issuedToClient(token: TokenClient, client: Revoker): boolean {
  switch (client.kind) {
    case 'agent':
      return token.agentId === client.agentId && token.clientIdUrl === null;
    case 'document':
      return token.clientIdUrl === client.url;
    default:
      return assertNever(client, 'client');
  }
}

/**
 * The client an access token of ours was issued to: its agent (`client_id`) and the document
 * URL it names (`client_id_url`); a token without that claim that came with a refresh token
 * family (`sid`) is its family's client's (the refresh grant issues none). Undefined when the
 * token names no agent, or a family of another agent.
 */
export async function accessTokenClient(
  claims: JWTPayload,
  families: Pick<TokenStateRepository, 'familyClient'>,
): Promise<TokenClient | undefined> {
  const agentId = claims.client_id;
  if (typeof agentId !== 'string' || !isCanonicalUuid(agentId)) return undefined;
  const url = claims.client_id_url;
  if (url !== undefined) return typeof url === 'string' ? { agentId, clientIdUrl: url } : undefined;
  const familyId = typeof claims.sid === 'string' && isCanonicalUuid(claims.sid) ? claims.sid : undefined;
  // An enterprise authorization's `sid` names no family: its tokens are the agent's own (confidential only).
  const family = familyId === undefined ? undefined : await families.familyClient(familyId);
  if (family === undefined) return { agentId, clientIdUrl: null };
  return family.agentId === agentId ? family : undefined;
}
