import type { SigningAlgorithm } from '@broker/domain';
import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, EntityManager, Repository } from 'typeorm';
import type { WithinTransaction } from '../within-transaction';
import { SigningKeyEntity } from './registry.entities';

/** A stored signing key; the private key stays sealed. */
export interface SigningKeyRecord {
  readonly kid: string;
  readonly algorithm: SigningAlgorithm;
  readonly publicJwk: Readonly<Record<string, string>>;
  readonly privateKeyEnvelope: Buffer;
  readonly isCurrent: boolean;
  readonly createdAt: Date;
  readonly deletedAt: Date | null;
}

export type NewSigningKey = Omit<SigningKeyRecord, 'isCurrent' | 'deletedAt'>;

export type DeleteKeyOutcome = 'deleted' | 'not_found' | 'last_key' | 'current_key';

/** Serialises key-set changes of all replicas (first key at start-up, add, promote, delete). */
const KEY_SET_LOCK = 7_316_425_002;

function toRecord(entity: SigningKeyEntity): SigningKeyRecord {
  return { ...entity, algorithm: entity.algorithm as SigningAlgorithm };
}

/**
 * The broker's signing keys. Every change of the key set runs in a transaction holding
 * one advisory lock, so concurrent adds, promotions and deletes (also from several
 * replicas) see each other's results: two deletes can never remove the last two keys,
 * and the first key is created once.
 */
@Injectable()
export class SigningKeyRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(SigningKeyEntity) private readonly keys: Repository<SigningKeyEntity>,
  ) {}

  /** Every key, soft-deleted ones included, newest first. */
  async list(): Promise<SigningKeyRecord[]> {
    const rows = await this.keys.find({ order: { createdAt: 'DESC', kid: 'DESC' } });
    return rows.map(toRecord);
  }

  /** Keys that are not deleted (published in the JWKS), newest first. */
  async listLive(): Promise<SigningKeyRecord[]> {
    return (await this.list()).filter((key) => key.deletedAt === null);
  }

  /** Adds a key; it becomes current when no live key exists. `events` are appended in the same transaction. */
  async add(key: NewSigningKey, events?: WithinTransaction<SigningKeyRecord>): Promise<SigningKeyRecord> {
    return this.withKeySetLock(async (manager) => {
      const liveCount = await manager
        .createQueryBuilder(SigningKeyEntity, 'k')
        .where('k.deleted_at IS NULL')
        .getCount();
      const entity = manager.create(SigningKeyEntity, { ...key, isCurrent: liveCount === 0, deletedAt: null });
      await manager.insert(SigningKeyEntity, entity);
      const record = toRecord(entity);
      await events?.(record, manager);
      return record;
    });
  }

  /** Creates the first key with `create()` only when no live key exists (start-up, replicas racing); `events` only when it did. */
  async ensureOne(
    create: () => Promise<NewSigningKey>,
    events?: WithinTransaction<SigningKeyRecord>,
  ): Promise<SigningKeyRecord | undefined> {
    return this.withKeySetLock(async (manager) => {
      const liveCount = await manager
        .createQueryBuilder(SigningKeyEntity, 'k')
        .where('k.deleted_at IS NULL')
        .getCount();
      if (liveCount > 0) return undefined;
      const entity = manager.create(SigningKeyEntity, { ...(await create()), isCurrent: true, deletedAt: null });
      await manager.insert(SigningKeyEntity, entity);
      const record = toRecord(entity);
      await events?.(record, manager);
      return record;
    });
  }

  /** Makes `kid` the current key; undefined when it does not exist or is deleted. `events` only when it was promoted. */
  async promote(kid: string, events?: WithinTransaction<SigningKeyRecord>): Promise<SigningKeyRecord | undefined> {
    return this.withKeySetLock(async (manager) => {
      const target = await manager.findOneBy(SigningKeyEntity, { kid });
      if (target === null || target.deletedAt !== null) return undefined;
      await manager
        .createQueryBuilder()
        .update(SigningKeyEntity)
        .set({ isCurrent: false })
        .where('is_current')
        .execute();
      await manager.update(SigningKeyEntity, { kid }, { isCurrent: true });
      const record = toRecord({ ...target, isCurrent: true });
      await events?.(record, manager);
      return record;
    });
  }

  /** Soft-deletes `kid` unless it is the last live key or the current one; `events` only when it was deleted. */
  async softDelete(kid: string, now: Date, events?: WithinTransaction<string>): Promise<DeleteKeyOutcome> {
    return this.withKeySetLock(async (manager) => {
      const live = await manager
        .createQueryBuilder(SigningKeyEntity, 'k')
        .where('k.deleted_at IS NULL')
        .setLock('pessimistic_write')
        .getMany();
      const target = live.find((key) => key.kid === kid);
      if (target === undefined) return 'not_found';
      if (live.length === 1) return 'last_key';
      if (target.isCurrent) return 'current_key';
      await manager.update(SigningKeyEntity, { kid }, { deletedAt: now });
      await events?.(kid, manager);
      return 'deleted';
    });
  }

  private withKeySetLock<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [KEY_SET_LOCK]);
      return work(manager);
    });
  }
}
