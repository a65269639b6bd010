import { randomBytes, randomUUID } from 'node:crypto';
import { EnterpriseAuthorizationRepository } from '@broker/persistence';
import type { TestBroker } from '@broker/testing';

/** What an organisation allowed, as a test states it (defaults: a trusted IdP, no scope, issued now). */
export interface AllowedByOrganisation {
  readonly principal: string;
  readonly agentId: string;
  readonly resourceUri: string;
  readonly issuer?: string;
  readonly scopes?: readonly string[];
  /** When the token was issued (default now); its assertion a few seconds before. */
  readonly issuedAt?: Date;
}

/**
 * An enterprise authorization, written as the JWT bearer grant writes one for a token issued on
 * an enterprise IdP's identity assertion (docs/oauth2.md "Enterprise-managed authorization"),
 * for tests of what people and admins do with it; its id (the tokens' `sid`).
 */
export async function allowByOrganisation(broker: TestBroker, allowed: AllowedByOrganisation): Promise<string> {
  const now = allowed.issuedAt ?? new Date();
  const recorded = await broker.broker
    .server('enduser')
    .app.get(EnterpriseAuthorizationRepository)
    .record({
      candidateId: randomUUID(),
      principal: allowed.principal,
      agentId: allowed.agentId,
      issuer: allowed.issuer ?? 'https://idp.example.com',
      resourceUri: allowed.resourceUri,
      scopes: allowed.scopes ?? [],
      now,
      expiresAt: new Date(now.getTime() + 3_600_000),
      assertionIssuedAt: new Date(now.getTime() - 5_000),
      assertionSha256: randomBytes(32),
      spentUntil: new Date(now.getTime() + 300_000),
    });
  if (recorded.outcome !== 'recorded') throw new Error(`the authorization was not recorded: ${recorded.outcome}`);
  return recorded.id;
}
