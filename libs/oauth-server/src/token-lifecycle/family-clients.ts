import type { TokenStateRepository } from '@broker/persistence';
import type { TokenClient } from './issued-to-client';

/** At most this many families are remembered; the oldest goes first. */
export const FAMILY_CLIENT_ENTRIES = 100_000;

/**
 * The client of a refresh token family's tokens (`TokenStateRepository.familyClient`),
 * remembered so that an agent introspecting a refreshed access token again costs no round
 * trip. What is remembered never changes: every token of a family is issued to the client that
 * started it, and an id that names no family (an enterprise authorization's `sid`) never comes
 * to name one, since a family is stored before any token carries its id.
 */
export class FamilyClients implements Pick<TokenStateRepository, 'familyClient'> {
  private readonly known = new Map<string, TokenClient | undefined>();

  constructor(private readonly state: Pick<TokenStateRepository, 'familyClient'>) {}

  async familyClient(familyId: string): Promise<TokenClient | undefined> {
    if (this.known.has(familyId)) return this.known.get(familyId);
    const client = await this.state.familyClient(familyId);
    if (this.known.size >= FAMILY_CLIENT_ENTRIES) this.known.delete(this.known.keys().next().value as string);
    this.known.set(familyId, client);
    return client;
  }
}
