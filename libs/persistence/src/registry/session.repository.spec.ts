import { randomBytes, randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { LogCapture, testBackends, testConfig } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { Transactions } from '../transactions';
import { ExchangeChanges } from './exchange-changes';
import { GrantRepository } from './grant.repository';
import { SessionRepository } from './session.repository';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';

describe.each(testBackends())('SessionRepository.overview on $name', (backend) => {
  let database: Database;
  let sessions: SessionRepository;
  let grants: GrantRepository;
  const now = new Date('2026-03-01T10:00:00Z');

  beforeAll(async () => {
    const config = testConfig({ storage: await backend.storage() });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    sessions = new SessionRepository(
      database.dataSource,
      backend.name,
      new Transactions(database.dataSource),
      new ExchangeChanges(database.exchangeCache, database.tokenState),
    );
    grants = new GrantRepository(
      database.dataSource,
      new Transactions(database.dataSource),
      new ExchangeChanges(database.exchangeCache, database.tokenState),
    );
  });

  afterAll(async () => {
    await database?.close();
  });

  async function service(name: string, createdAt: Date, id = randomUUID()): Promise<string> {
    await database.dataSource.query(
      `INSERT INTO services (id, display_name, logo_url, client_id, token_endpoint_auth_method, issuer_uri, authorization_endpoint, token_endpoint, scopes, created_at, updated_at)
       VALUES ($1, $2, $3, 'client', 'none', 'https://idp.example.com', 'https://idp.example.com/a', 'https://idp.example.com/t', $4, $5, $5)`,
      [
        id,
        name,
        `https://cdn.example.com/${name}.png`,
        JSON.stringify([{ scope: `${name}.read`, description: `Read ${name}` }]),
        createdAt,
      ],
    );
    return id;
  }

  async function agent(name: string): Promise<string> {
    const id = randomUUID();
    await database.dataSource.query('INSERT INTO agents (id, display_name) VALUES ($1, $2)', [id, name]);
    return id;
  }

  async function permissionSet(): Promise<string> {
    const id = randomUUID();
    await database.dataSource.query('INSERT INTO permission_sets (id, name) VALUES ($1, $2)', [id, `set ${id}`]);
    return id;
  }

  async function session(principal: string, serviceId: string): Promise<string> {
    const id = randomUUID();
    await sessions.upsert({
      id,
      principal,
      serviceId,
      accessTokenEnvelope: randomBytes(40),
      refreshTokenEnvelope: null,
      tokenType: 'Bearer',
      scopes: ['read'],
      accessTokenExpiresAt: new Date(now.getTime() + 60_000),
      refreshTokenExpiresAt: null,
      initiatedAt: now,
      updatedAt: now,
    });
    return id;
  }

  it("lists every service oldest first with only the caller's session and agents; other principals' rows are invisible", async () => {
    const base = now.getTime() - 3_600_000;
    // Same creation time: ordered by id, as the services list is.
    const [mail, files] = [
      await service('mail', new Date(base), '00000000-0000-4000-8000-000000000002'),
      await service('files', new Date(base), '00000000-0000-4000-8000-000000000001'),
    ];
    const calendar = await service('calendar', new Date(base - 1_000));
    const set = await permissionSet();
    const otherSet = await permissionSet();
    const [reader, writer, expired, bobs] = [
      await agent('Reader'),
      await agent('Writer'),
      await agent('Expired'),
      await agent('Bob agent'),
    ];

    const aliceMail = await session(ALICE, mail);
    await session(BOB, files);
    await session(BOB, mail);
    // Reader delegates mail through two permission sets: counted once.
    await grants.upsert(
      randomUUID(),
      ALICE,
      reader,
      null,
      [
        { permissionSetId: set, serviceId: mail, scopes: ['mail.read'] },
        { permissionSetId: otherSet, serviceId: mail, scopes: [] },
      ],
      [],
      now,
    );
    await grants.upsert(
      randomUUID(),
      ALICE,
      writer,
      new Date(now.getTime() + 1),
      [
        { permissionSetId: set, serviceId: mail, scopes: [] },
        { permissionSetId: set, serviceId: files, scopes: [] },
      ],
      [],
      now,
    );
    // Expired exactly now (valid_until > now is active): not counted.
    await grants.upsert(
      randomUUID(),
      ALICE,
      expired,
      now,
      [{ permissionSetId: set, serviceId: mail, scopes: [] }],
      [],
      now,
    );
    await grants.upsert(
      randomUUID(),
      BOB,
      bobs,
      null,
      [{ permissionSetId: set, serviceId: mail, scopes: [] }],
      [],
      now,
    );

    const overview = await sessions.overview(ALICE, now);
    expect(overview.map((row) => row.service.id)).toEqual([calendar, files, mail]);
    expect(overview.map((row) => row.session?.id)).toEqual([undefined, undefined, aliceMail]);
    expect(overview[2]).toMatchObject({
      service: {
        id: mail,
        displayName: 'mail',
        logoUrl: 'https://cdn.example.com/mail.png',
        scopes: [{ scope: 'mail.read', description: 'Read mail' }],
      },
      session: {
        principal: ALICE,
        serviceId: mail,
        tokenType: 'Bearer',
        scopes: ['read'],
        refreshTokenEnvelope: null,
        needsReauthentication: false,
      },
      dependentAgentCount: 2,
    });
    expect(overview[2]?.session?.accessTokenEnvelope).toBeInstanceOf(Buffer);
    expect(overview[2]?.dependentAgentCount).toBe((await grants.agentsDelegatingService(ALICE, mail, now)).length);
    // No session with files: no count either, though Writer delegates it.
    expect(overview[1]?.dependentAgentCount).toBe(0);

    const bob = await sessions.overview(BOB, now);
    expect(bob.map((row) => row.session?.principal)).toEqual([undefined, BOB, BOB]);
    expect(bob.map((row) => row.dependentAgentCount)).toEqual([0, 0, 1]);
    expect(await sessions.overview('carol@example.com', now)).toEqual(
      overview.map((row) => ({ ...row, session: undefined, dependentAgentCount: 0 })),
    );

    // Writer's grant lapses a millisecond later.
    expect((await sessions.overview(ALICE, new Date(now.getTime() + 1)))[2]?.dependentAgentCount).toBe(1);
  });
});
