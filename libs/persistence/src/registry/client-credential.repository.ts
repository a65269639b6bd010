import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { WithinTransaction } from '../within-transaction';
import { ClientCache } from './client-cache';
import { AgentClientCredentialEntity } from './registry.entities';

/** An agent's broker-issued client credential: only the secret's digest is stored. */
export interface ClientCredentialRecord {
  readonly agentId: string;
  readonly secretSha256: Buffer;
  readonly createdAt: Date;
  readonly rotatedAt: Date | null;
}

/** Agent client credentials, one per agent. */
@Injectable()
export class ClientCredentialRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    /** The process's client cache (`Database.clientCache`), cleared by every write here. */
    private readonly clientCache: ClientCache,
  ) {}

  async find(agentId: string): Promise<ClientCredentialRecord | undefined> {
    return (await this.dataSource.getRepository(AgentClientCredentialEntity).findOneBy({ agentId })) ?? undefined;
  }

  /**
   * Stores a new secret digest: creates the credential, or rotates it in place (the old
   * digest is overwritten, so the old secret stops working at once). One statement, so
   * two concurrent generations cannot both "create". With `events` (issued or
   * rotated, told by `created`), the write and its events share one transaction.
   */
  async upsert(
    agentId: string,
    secretSha256: Buffer,
    now: Date,
    events?: WithinTransaction<{ created: boolean }>,
  ): Promise<{ record: ClientCredentialRecord; created: boolean }> {
    // Cleared before and after the write: no read can keep the old digest past it.
    this.clientCache.invalidate();
    try {
      const write = async (manager: EntityManager) => {
        const rows = await manager.query<{ created_at: Date; rotated_at: Date | null; created: boolean }[]>(
          `INSERT INTO agent_client_credentials (agent_id, secret_sha256, created_at, rotated_at)
           VALUES ($1, $2, $3, NULL)
           ON CONFLICT (agent_id) DO UPDATE SET secret_sha256 = EXCLUDED.secret_sha256, rotated_at = $3
           RETURNING created_at, rotated_at, (xmax = 0) AS created`,
          [agentId, secretSha256, now],
        );
        const row = rows[0] as { created_at: Date; rotated_at: Date | null; created: boolean };
        await events?.({ created: row.created }, manager);
        return {
          record: { agentId, secretSha256, createdAt: row.created_at, rotatedAt: row.rotated_at },
          created: row.created,
        };
      };
      return await (events === undefined ? write(this.dataSource.manager) : this.dataSource.transaction(write));
    } finally {
      this.clientCache.invalidate();
    }
  }

  /** False when the agent has none. With `events`, the delete and its events share one transaction. */
  async delete(agentId: string, events?: WithinTransaction<string>): Promise<boolean> {
    this.clientCache.invalidate();
    try {
      if (events === undefined)
        return (
          ((await this.dataSource.getRepository(AgentClientCredentialEntity).delete({ agentId })).affected ?? 0) > 0
        );
      return await this.dataSource.transaction(async (manager) => {
        const deleted = ((await manager.delete(AgentClientCredentialEntity, { agentId })).affected ?? 0) > 0;
        if (deleted) await events(agentId, manager);
        return deleted;
      });
    } finally {
      this.clientCache.invalidate();
    }
  }
}
