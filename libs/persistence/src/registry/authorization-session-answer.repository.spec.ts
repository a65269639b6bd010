import { randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import {
  ANSWER_PURGE_PER_CLAIM,
  AuthorizationSessionAnswerRepository,
  type AuthorizationSessionAnswer,
} from './authorization-session-answer.repository';

const AGENT = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

describe.each(testBackends())('AuthorizationSessionAnswerRepository on $name', (backend) => {
  let database: Database;
  let answers: AuthorizationSessionAnswerRepository;
  const now = new Date('2026-03-01T10:00:00Z');
  const later = (ms: number): Date => new Date(now.getTime() + ms);
  const answer = (overrides: Partial<AuthorizationSessionAnswer> = {}): AuthorizationSessionAnswer => ({
    sessionId: randomUUID(),
    principal: 'alice@example.com',
    agentId: AGENT,
    decision: 'allowed',
    answeredAt: now,
    expiresAt: later(600_000),
    ...overrides,
  });

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    answers = new AuthorizationSessionAnswerRepository(database.dataSource);
  });

  afterAll(async () => {
    await database?.close();
  });

  const records = async (): Promise<number> =>
    Number(
      (await database.dataSource.query<{ n: string }[]>('SELECT count(*) AS n FROM authorization_session_answers'))[0]
        ?.n,
    );

  it('answers a session once; the first answer stays, readable by its principal only', async () => {
    const first = answer();
    expect(await answers.claim(first)).toBe(true);
    expect(await answers.claim({ ...first, decision: 'denied', answeredAt: later(1_000) })).toBe(false);
    expect(await answers.find(first.principal, first.sessionId)).toEqual(first);
    expect(await answers.find('bob@example.com', first.sessionId)).toBeUndefined();
    expect(await answers.find(first.principal, randomUUID())).toBeUndefined();
  });

  it('lets exactly one of many concurrent answers win', async () => {
    const sessionId = randomUUID();
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        answers.claim(answer({ sessionId, decision: i % 2 === 0 ? 'allowed' : 'denied' })),
      ),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(1);
  });

  it('an answer claimed in a transaction that rolls back was never given', async () => {
    const rolledBack = answer();
    await expect(
      database.dataSource.transaction(async (manager) => {
        expect(await answers.claim(rolledBack, manager)).toBe(true);
        throw new Error('the grant write failed');
      }),
    ).rejects.toThrow('the grant write failed');
    expect(await answers.find(rolledBack.principal, rolledBack.sessionId)).toBeUndefined();
    expect(await answers.claim(rolledBack)).toBe(true);
  });

  it('removes answers whose session token has expired as claims go by, never live ones', async () => {
    await database.dataSource.query('DELETE FROM authorization_session_answers');
    const start = later(60 * 60_000);
    for (let i = 0; i < 5; i += 1)
      await answers.claim(answer({ answeredAt: start, expiresAt: new Date(start.getTime() + 1_000) }));
    const live = answer({ answeredAt: start, expiresAt: new Date(start.getTime() + 600_000) });
    await answers.claim(live);
    expect(await records()).toBe(6);
    const after = new Date(start.getTime() + 2_000);
    await answers.claim(answer({ answeredAt: after, expiresAt: new Date(after.getTime() + 600_000) }));
    expect(await records()).toBe(7 - ANSWER_PURGE_PER_CLAIM);
    for (let i = 0; i < 3; i += 1)
      await answers.claim(answer({ answeredAt: after, expiresAt: new Date(after.getTime() + 600_000) }));
    expect(await records()).toBe(5);
    expect(await answers.find(live.principal, live.sessionId)).toEqual(live);
  });
});
