import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FamilyClients } from './family-clients';
import { accessTokenClient, issuedToClient, type TokenClient } from './issued-to-client';

const AGENT = randomUUID();
const OTHER_AGENT = randomUUID();
const DOCUMENT = 'https://client.example.com/oauth/metadata.json';
const OTHER_DOCUMENT = 'https://client.example.com/oauth/other.json';

/** Families as `TokenStateRepository.familyClient` finds them, counting the lookups. */
class Families {
  readonly lookups: string[] = [];
  constructor(private readonly known: Readonly<Record<string, TokenClient>>) {}

  familyClient(familyId: string): Promise<TokenClient | undefined> {
    this.lookups.push(familyId);
    return Promise.resolve(this.known[familyId]);
  }
}

describe('issuedToClient', () => {
  const own: TokenClient = { agentId: AGENT, clientIdUrl: null };
  const document: TokenClient = { agentId: AGENT, clientIdUrl: DOCUMENT };

  it("gives an agent's own client id its own tokens only, never a metadata-document client's", () => {
    expect(issuedToClient(own, { kind: 'agent', agentId: AGENT })).toBe(true);
    expect(issuedToClient(document, { kind: 'agent', agentId: AGENT })).toBe(false);
    expect(issuedToClient(own, { kind: 'agent', agentId: OTHER_AGENT })).toBe(false);
  });

  it("gives a metadata-document client the tokens issued to its URL only, never the agent's own", () => {
    expect(issuedToClient(document, { kind: 'document', url: DOCUMENT })).toBe(true);
    expect(issuedToClient(document, { kind: 'document', url: OTHER_DOCUMENT })).toBe(false);
    expect(issuedToClient(own, { kind: 'document', url: DOCUMENT })).toBe(false);
  });
});

describe('accessTokenClient', () => {
  const family = randomUUID();
  const ownFamily = randomUUID();
  const foreignFamily = randomUUID();
  const families = new Families({
    [family]: { agentId: AGENT, clientIdUrl: DOCUMENT },
    [ownFamily]: { agentId: AGENT, clientIdUrl: null },
    [foreignFamily]: { agentId: OTHER_AGENT, clientIdUrl: null },
  });

  it('reads the document URL the token names, without looking up its family', async () => {
    const lookups = families.lookups.length;
    expect(await accessTokenClient({ client_id: AGENT, client_id_url: DOCUMENT, sid: family }, families)).toEqual({
      agentId: AGENT,
      clientIdUrl: DOCUMENT,
    });
    expect(families.lookups).toHaveLength(lookups);
  });

  it("takes a token without that claim to be its refresh token family's client's, else the agent's own", async () => {
    expect(await accessTokenClient({ client_id: AGENT, sid: family }, families)).toEqual({
      agentId: AGENT,
      clientIdUrl: DOCUMENT,
    });
    expect(await accessTokenClient({ client_id: AGENT, sid: ownFamily }, families)).toEqual({
      agentId: AGENT,
      clientIdUrl: null,
    });
    // No family: client credentials, or an enterprise authorization's sid.
    expect(await accessTokenClient({ client_id: AGENT }, families)).toEqual({ agentId: AGENT, clientIdUrl: null });
    expect(await accessTokenClient({ client_id: AGENT, sid: randomUUID() }, families)).toEqual({
      agentId: AGENT,
      clientIdUrl: null,
    });
  });

  it("is nobody's token when it names no agent, a claim that is no URL string, or another agent's family", async () => {
    expect(await accessTokenClient({ client_id: 'not-a-uuid' }, families)).toBeUndefined();
    expect(await accessTokenClient({ client_id: AGENT, client_id_url: 42 }, families)).toBeUndefined();
    expect(await accessTokenClient({ client_id: AGENT, sid: foreignFamily }, families)).toBeUndefined();
  });
});

describe('FamilyClients', () => {
  it('looks each family up once, a sid that names none included', async () => {
    const family = randomUUID();
    const none = randomUUID();
    const families = new Families({ [family]: { agentId: AGENT, clientIdUrl: DOCUMENT } });
    const remembered = new FamilyClients(families);
    for (let i = 0; i < 3; i += 1) {
      expect(await remembered.familyClient(family)).toEqual({ agentId: AGENT, clientIdUrl: DOCUMENT });
      expect(await remembered.familyClient(none)).toBeUndefined();
    }
    expect(families.lookups).toEqual([family, none]);
  });
});
