import { createHash, timingSafeEqual } from 'node:crypto';
import { adminEvent, EventLedger, recordChange } from '@broker/events';
import { AgentRepository, ClientCredentialRepository } from '@broker/persistence';
import { Clock, Random } from '@broker/domain';
import { Injectable } from '@nestjs/common';
import { KeyManagementError } from '../key-management-error';

/** Recognisable prefix of broker-issued client secrets (secret scanners can match it). */
export const CLIENT_SECRET_PREFIX = 'aib_cs_';

export interface IssuedClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly createdAt: Date;
  /** Set on rotation: when the previous secret stopped working. */
  readonly previousInvalidatedAt: Date | null;
  readonly created: boolean;
}

export interface ClientCredentialsMetadata {
  readonly clientId: string;
  readonly createdAt: Date;
  readonly rotatedAt: Date | null;
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time comparison of a presented secret with a stored digest. */
export function secretMatches(storedSha256: Buffer, secret: string): boolean {
  const presented = digest(secret);
  return storedSha256.length === presented.length && timingSafeEqual(storedSha256, presented);
}

/**
 * Broker-issued client credentials of agents (client id = agent id). The secret is 256
 * random bits, shown once, stored only as its SHA-256 digest: with that entropy a slow
 * password hash would add nothing but latency to every client_credentials request.
 */
@Injectable()
export class ClientCredentialsService {
  constructor(
    private readonly credentials: ClientCredentialRepository,
    private readonly agents: AgentRepository,
    private readonly random: Random,
    private readonly clock: Clock,
    private readonly ledger: EventLedger,
  ) {}

  /**
   * Generates the agent's first secret, or rotates it (the old one stops working at once).
   * `client_credentials.issued` or `.rotated` by `admin`, in the write's transaction.
   */
  async generate(agentId: string, admin: string): Promise<IssuedClientCredentials> {
    await this.assertAgent(agentId);
    const secret = `${CLIENT_SECRET_PREFIX}${this.random.token(32)}`;
    const events = recordChange(this.ledger, ({ created }: { created: boolean }) =>
      adminEvent(
        created ? 'client_credentials.issued' : 'client_credentials.rotated',
        admin,
        { agentId },
        { client_id: agentId },
      ),
    );
    const { record, created } = await this.credentials.upsert(agentId, digest(secret), this.clock.now(), events);
    return {
      clientId: agentId,
      clientSecret: secret,
      createdAt: record.createdAt,
      previousInvalidatedAt: created ? null : record.rotatedAt,
      created,
    };
  }

  async metadata(agentId: string): Promise<ClientCredentialsMetadata> {
    await this.assertAgent(agentId);
    const record = await this.credentials.find(agentId);
    if (record === undefined)
      throw new KeyManagementError('client_credentials_missing', `agent ${agentId} has no client credentials`);
    return { clientId: agentId, createdAt: record.createdAt, rotatedAt: record.rotatedAt };
  }

  /** `client_credentials.revoked` by `admin`, in the deletion's transaction. */
  async revoke(agentId: string, admin: string): Promise<void> {
    await this.assertAgent(agentId);
    const events = recordChange(this.ledger, () =>
      adminEvent('client_credentials.revoked', admin, { agentId }, { client_id: agentId }),
    );
    if (!(await this.credentials.delete(agentId, events)))
      throw new KeyManagementError('client_credentials_missing', `agent ${agentId} has no client credentials`);
  }

  /** True when `secret` is the agent's current client secret (constant-time comparison). */
  async verifyClientSecret(agentId: string, secret: string): Promise<boolean> {
    const record = await this.credentials.find(agentId);
    if (record === undefined) return false;
    return secretMatches(record.secretSha256, secret);
  }

  private async assertAgent(agentId: string): Promise<void> {
    if ((await this.agents.findById(agentId)) === undefined)
      throw new KeyManagementError('agent_missing', `no agent ${agentId}`);
  }
}
