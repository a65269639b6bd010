import { createHash, randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import {
  ClientAssertionReplayRepository,
  DpopProofReplayRepository,
  REPLAY_PURGE_PER_CLAIM,
} from './replay-records.repository';

const jti = (): Buffer => createHash('sha256').update(randomUUID()).digest();

// Both records, each on both backends: the DPoP one claims in batches (and commits without waiting for the WAL flush),
// and leaves expired records to its retention job.
const RECORDS = [
  {
    kind: 'ClientAssertionReplayRepository',
    table: 'client_assertion_replays',
    Record: ClientAssertionReplayRepository,
  },
  { kind: 'DpopProofReplayRepository', table: 'dpop_proof_replays', Record: DpopProofReplayRepository },
] as const;

describe.each(
  testBackends().flatMap((backend) => RECORDS.map((record) => ({ ...record, backend, name: backend.name }))),
)('$kind on $name', ({ backend, table, Record }) => {
  let database: Database;
  let replays: ClientAssertionReplayRepository | DpopProofReplayRepository;
  const now = new Date('2026-03-01T10:00:00Z');
  const later = (ms: number): Date => new Date(now.getTime() + ms);

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    replays = new Record(database.dataSource);
  });

  afterAll(async () => {
    await database?.close();
  });

  const records = async (): Promise<number> =>
    Number((await database.dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM ${table}`))[0]?.n);

  it('accepts a jti once while its record lives', async () => {
    const id = jti();
    expect(await replays.claimFirstUse(id, later(60_000), now)).toBe(true);
    expect(await replays.claimFirstUse(id, later(60_000), now)).toBe(false);
    expect(await replays.claimFirstUse(id, later(120_000), later(59_999))).toBe(false);
    expect(await replays.claimFirstUse(jti(), later(60_000), now)).toBe(true);
  });

  it('lets exactly one of many concurrent claims of a jti win', async () => {
    const id = jti();
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => replays.claimFirstUse(id, later(60_000), now)));
    expect(outcomes.filter(Boolean)).toHaveLength(1);
  });

  it('takes over a record that outlived its assertion: the jti may be used again', async () => {
    const id = jti();
    expect(await replays.claimFirstUse(id, later(60_000), now)).toBe(true);
    expect(await replays.claimFirstUse(id, later(180_000), later(60_000))).toBe(true);
    expect(await replays.claimFirstUse(id, later(180_000), later(61_000))).toBe(false);
  });

  it('accepts every one of many distinct concurrent claims, and records each once', async () => {
    await database.dataSource.query(`DELETE FROM ${table}`);
    const ids = Array.from({ length: 50 }, jti);
    const outcomes = await Promise.all(ids.map((id) => replays.claimFirstUse(id, later(60_000), now)));
    expect(outcomes.every(Boolean)).toBe(true);
    expect(await records()).toBe(50);
    const again = await Promise.all(ids.map((id) => replays.claimFirstUse(id, later(60_000), now)));
    expect(again.some(Boolean)).toBe(false);
  });

  const purgesOnClaim = Record === ClientAssertionReplayRepository;

  // Each record's own way of purging (no test is skipped: each kind defines only its own).
  if (!purgesOnClaim)
    it('leaves expired records to the retention job, which deletes them and no live one', async () => {
      const dpop = replays as DpopProofReplayRepository;
      await database.dataSource.query(`DELETE FROM ${table}`);
      const start = later(10 * 60_000);
      for (let i = 0; i < 5; i += 1) await dpop.claimFirstUse(jti(), new Date(start.getTime() + 1_000), start);
      const live = jti();
      await dpop.claimFirstUse(live, new Date(start.getTime() + 600_000), start);
      const after = new Date(start.getTime() + 2_000);
      await dpop.claimFirstUse(jti(), new Date(after.getTime() + 600_000), after);
      expect(await records()).toBe(7);
      expect(await dpop.purgeExpired(after, 3)).toBe(3);
      expect(await dpop.purgeExpired(after, 3)).toBe(2);
      expect(await dpop.purgeExpired(after, 3)).toBe(0);
      expect(await records()).toBe(2);
      expect(await dpop.claimFirstUse(live, new Date(after.getTime() + 600_000), after)).toBe(false);
    });

  if (purgesOnClaim)
    it('removes expired records as claims go by, never live ones', async () => {
      await database.dataSource.query(`DELETE FROM ${table}`);
      const start = later(10 * 60_000);
      for (let i = 0; i < 5; i += 1) await replays.claimFirstUse(jti(), new Date(start.getTime() + 1_000), start);
      const live = jti();
      await replays.claimFirstUse(live, new Date(start.getTime() + 600_000), start);
      expect(await records()).toBe(6);
      // Past the five short records: each claim removes up to REPLAY_PURGE_PER_CLAIM of them.
      const after = new Date(start.getTime() + 2_000);
      await replays.claimFirstUse(jti(), new Date(after.getTime() + 600_000), after);
      expect(await records()).toBe(7 - REPLAY_PURGE_PER_CLAIM);
      for (let i = 0; i < 3; i += 1) await replays.claimFirstUse(jti(), new Date(after.getTime() + 600_000), after);
      expect(await records()).toBe(5);
      expect(await replays.claimFirstUse(live, new Date(after.getTime() + 600_000), after)).toBe(false);
    });
});
