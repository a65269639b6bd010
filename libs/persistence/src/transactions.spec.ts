import { randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { Logger } from '@nestjs/common';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Database } from './database';
import { ExchangeChanges } from './registry/exchange-changes';
import { GrantRepository } from './registry/grant.repository';
import { Transactions } from './transactions';

describe.each(testBackends())('Transactions.run and its after-commit callbacks on $name', (backend) => {
  let database: Database;
  let transactions: Transactions;

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    transactions = new Transactions(database.dataSource);
    await database.dataSource.query('CREATE TABLE tx_rows (id text PRIMARY KEY)');
    // A constraint checked at COMMIT: a transaction whose work succeeded can still fail to commit.
    await database.dataSource.query('CREATE TABLE tx_parents (id text PRIMARY KEY)');
    await database.dataSource.query(
      'CREATE TABLE tx_children (parent text REFERENCES tx_parents (id) DEFERRABLE INITIALLY DEFERRED)',
    );
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    await database?.close();
  });

  const stored = async (id: string): Promise<boolean> =>
    (await database.dataSource.query<unknown[]>('SELECT 1 FROM tx_rows WHERE id = $1', [id])).length === 1;

  it('runs the callbacks after COMMIT, in the order registered, where the committed row is visible', async () => {
    const id = randomUUID();
    const order: string[] = [];
    let seenByFirst: Promise<boolean> | undefined;
    const result = await transactions.run(async (manager, scope) => {
      scope.afterCommit(() => {
        order.push('first');
        // A read outside the transaction: it finds the row only once the transaction has committed.
        seenByFirst = stored(id);
      });
      await manager.query('INSERT INTO tx_rows (id) VALUES ($1)', [id]);
      scope.afterCommit(() => order.push('second'));
      scope.afterCommit(() => order.push('third'));
      // Nothing runs before the commit.
      expect(order).toEqual([]);
      return 'written';
    });
    expect(result).toBe('written');
    expect(order).toEqual(['first', 'second', 'third']);
    expect(await seenByFirst).toBe(true);
  });

  it('drops the callbacks when the work fails: the transaction rolled back, nothing committed', async () => {
    const id = randomUUID();
    const callback = vi.fn();
    await expect(
      transactions.run(async (manager, scope) => {
        scope.afterCommit(callback);
        await manager.query('INSERT INTO tx_rows (id) VALUES ($1)', [id]);
        throw new Error('refused after the insert');
      }),
    ).rejects.toThrow('refused after the insert');
    expect(callback).not.toHaveBeenCalled();
    expect(await stored(id)).toBe(false);
  });

  it('runs the callbacks and rethrows when COMMIT itself fails: its outcome is not the work’s to know', async () => {
    const callback = vi.fn();
    await expect(
      transactions.run(async (manager, scope) => {
        scope.afterCommit(callback);
        // Violates the deferred foreign key: refused by COMMIT, not by this statement.
        await manager.query('INSERT INTO tx_children (parent) VALUES ($1)', [randomUUID()]);
      }),
    ).rejects.toThrow(/foreign key/);
    expect(callback).toHaveBeenCalledTimes(1);
    expect(await database.dataSource.query('SELECT * FROM tx_children')).toEqual([]);
  });

  it('keeps the commit and the later callbacks when a callback throws, and logs the failure', async () => {
    const logged = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const id = randomUUID();
    const later = vi.fn();
    const result = await transactions.run(async (manager, scope) => {
      await manager.query('INSERT INTO tx_rows (id) VALUES ($1)', [id]);
      scope.afterCommit(() => {
        throw new Error('cache unavailable');
      });
      scope.afterCommit(later);
      return id;
    });
    expect(result).toBe(id);
    expect(await stored(id)).toBe(true);
    expect(later).toHaveBeenCalledTimes(1);
    expect(logged).toHaveBeenCalledWith(expect.stringContaining('cache unavailable'), expect.any(String));
  });

  it('refuses a callback registered after the transaction ended', async () => {
    let kept: Parameters<Parameters<Transactions['run']>[0]>[1] | undefined;
    await transactions.run((_manager, scope) => {
      kept = scope;
      return Promise.resolve();
    });
    expect(() => kept?.afterCommit(() => undefined)).toThrow('inside the transaction');
  });

  describe('a grant write through GrantRepository', () => {
    const forgotten: (string | undefined)[] = [];
    let grants: GrantRepository;
    let agent: string;
    const principal = 'tx-alice@example.com';

    beforeAll(async () => {
      // What the exchange's caches are told, recorded (both are told the same principal).
      const contexts = { invalidate: (p: string | undefined) => forgotten.push(p) };
      const tokenState = { forgetPrincipal: (p: string | undefined) => forgotten.push(p) };
      grants = new GrantRepository(database.dataSource, transactions, new ExchangeChanges(contexts, tokenState));
      agent = randomUUID();
      await database.dataSource.query(
        "INSERT INTO agents (id, display_name, created_at, updated_at) VALUES ($1, 'Agent', now(), now())",
        [agent],
      );
    });

    it("makes this process forget the person's exchange contexts once the write committed, not when it rolled back", async () => {
      const now = new Date();
      await grants.upsert(randomUUID(), principal, agent, null, [], [], now);
      expect(forgotten).toEqual([principal, principal]);

      forgotten.length = 0;
      await expect(
        grants.deleteAny(principal, agent, now, () => Promise.reject(new Error('event refused'))),
      ).rejects.toThrow('event refused');
      expect(forgotten).toEqual([]);
      expect(await grants.hasActive(principal, agent, now)).toBe(true);

      expect(await grants.deleteAny(principal, agent, now)).toBeDefined();
      expect(forgotten).toEqual([principal, principal]);
    });
  });
});
