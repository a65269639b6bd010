import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Clock, CryptoRandom, Random } from '@broker/domain';
import { EventLedger } from '@broker/events';
import { FrozenClock, pgliteStorage, testConfig } from '@broker/testing';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { getDataSourceToken, getEntityManagerToken, getRepositoryToken } from '@nestjs/typeorm';
import pino from 'pino';
import { DataSource, type EntityManager, type Repository } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from './database';
import { PersistenceModule } from './persistence.module';
import { SigningKeyEntity } from './registry/registry.entities';
import { SigningKeyRepository } from './registry/signing-key.repository';

/** What `CoreModule` gives every application besides persistence: the config, clock and randomness. */
@Global()
@Module({})
class RuntimeStub {
  static of(config: BrokerConfig): DynamicModule {
    const providers = [
      { provide: BROKER_CONFIG, useValue: config },
      { provide: Clock, useValue: new FrozenClock('2026-05-01T10:00:00Z') },
      { provide: Random, useValue: new CryptoRandom() },
    ];
    return { module: RuntimeStub, providers, exports: providers.map((provider) => provider.provide) };
  }
}

/** One application's worth of persistence, imported the way `CoreModule` imports it. */
function application(config: BrokerConfig, database: Database): Promise<TestingModule> {
  return Test.createTestingModule({
    imports: [RuntimeStub.of(config), PersistenceModule.forDatabase(database)],
  }).compile();
}

function signingKey(kid: string): Parameters<SigningKeyRepository['add']>[0] {
  return {
    kid,
    algorithm: 'ES256',
    publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' },
    privateKeyEnvelope: Buffer.from('sealed'),
    createdAt: new Date('2026-05-01T10:00:00Z'),
  };
}

describe('PersistenceModule: the process database through @nestjs/typeorm (PGlite)', () => {
  let directory: string;
  let config: BrokerConfig;
  let database: Database;

  beforeAll(async () => {
    // On disk: the queued events written by `Database.close` are read back by a second opening.
    directory = await mkdtemp(join(tmpdir(), 'persistence-module-'));
    config = testConfig({
      storage: { backend: 'pglite', pglite: pgliteStorage(directory) },
      // Queued events are written only by `flush` or `close` during the test.
      events: { queue: { flush_interval: '1h', batch_size: 10_000 } },
    });
    database = await Database.open(config, pino({ level: 'silent' }));
  });

  afterAll(async () => {
    await database.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('injects the one data source opened by Database.open, its manager and entity repositories', async () => {
    const app = await application(config, database);
    try {
      expect(app.get(getDataSourceToken())).toBe(database.dataSource);
      expect(app.get(DataSource)).toBe(database.dataSource);
      expect(app.get<EntityManager>(getEntityManagerToken())).toBe(database.dataSource.manager);
      const keys = app.get<Repository<SigningKeyEntity>>(getRepositoryToken(SigningKeyEntity));
      expect(keys.manager.dataSource).toBe(database.dataSource);
      expect(keys.target).toBe(SigningKeyEntity);
    } finally {
      await app.close();
    }
  });

  it('builds repositories by injection that write and read through it', async () => {
    const app = await application(config, database);
    try {
      const repository = app.get(SigningKeyRepository);
      await repository.add(signingKey('module-spec-key'));
      expect((await repository.list()).map((key) => key.kid)).toContain('module-spec-key');
      // The row is in the process's database, not in a data source of the application's own.
      const rows = await database.dataSource.query<{ kid: string }[]>('SELECT kid FROM signing_keys WHERE kid = $1', [
        'module-spec-key',
      ]);
      expect(rows).toEqual([{ kid: 'module-spec-key' }]);
    } finally {
      await app.close();
    }
  });

  it('keeps the data source open for the other application and the Database when one application closes', async () => {
    const first = await application(config, database);
    const second = await application(config, database);
    // The Database's own hold and one per application.
    expect(database.dataSource.holders).toBe(3);

    await first.close();
    expect(database.dataSource.isInitialized).toBe(true);
    const keys = second.get(SigningKeyRepository);
    await keys.add(signingKey('after-first-closed'));
    expect((await keys.list()).map((key) => key.kid)).toContain('after-first-closed');

    second.get(EventLedger).enqueue({
      type: 'token.exchanged',
      actor: { type: 'gateway', id: 'gw' },
      principal: 'queued-at-close@example.com',
      agentId: null,
      serviceId: null,
      outcome: 'success',
      traceId: null,
      details: { resource: 'https://mail.example.com', oauth_error: null },
    });
    await second.close();
    expect(database.dataSource.holders).toBe(1);
    expect(database.dataSource.isInitialized).toBe(true);
    expect(await database.dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);

    // The Database lets go last: its close writes the queued event, then ends the data source.
    await database.close();
    expect(database.dataSource.isInitialized).toBe(false);
    const reopened = await Database.open(config, pino({ level: 'silent' }));
    try {
      const rows = await reopened.dataSource.query<{ n: number }[]>(
        'SELECT count(*)::int AS n FROM events WHERE principal = $1',
        ['queued-at-close@example.com'],
      );
      expect(rows).toEqual([{ n: 1 }]);
    } finally {
      await reopened.close();
    }
  });

  it('refuses to lend the data source of a closed Database', async () => {
    // The previous test closed it.
    expect(database.dataSource.isInitialized).toBe(false);
    await expect(application(config, database)).rejects.toThrow('the database is closed');
  });
});
