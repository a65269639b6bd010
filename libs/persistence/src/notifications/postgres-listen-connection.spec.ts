import { randomUUID } from 'node:crypto';
import { createLogger } from '@broker/http';
import { BrokerMetrics } from '@broker/telemetry';
import {
  createPostgresDatabase,
  eventually,
  LogCapture,
  postgresServerUrl,
  startPostgresWireProxy,
  testConfig,
  type PostgresWireProxy,
  type ProxiedSession,
} from '@broker/testing';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database';
import { ExchangeContextCache } from '../registry/exchange-context-cache';
import { TokenStateCache, type AccessTokenKey } from '../registry/token-state-cache';
import { TokenStateRepository } from '../registry/token-state.repository';
import { PostgresListenConnection } from './postgres-listen-connection';

const LISTEN_APPLICATION = 'agent-identity-broker-listen';
/** Whatever a read's clock says, the caches' 60 s backstop never passes: only the listener can stop a stale answer. */
const NOW = new Date('2026-11-26T12:00:00Z');

/**
 * The LISTEN connection behind a TCP proxy that can silence it without closing it, on
 * PostgreSQL: a half-open socket (the proxy stops forwarding both ways) and a transaction
 * pooler (the server session is made to `UNLISTEN *` behind the client's back). In neither
 * case does the socket close, and a revocation committed by another replica is never
 * delivered: the heartbeat must notice it, stop the caches serving from memory, end the
 * connection and reconnect. Short heartbeat timings keep the test to a few seconds.
 */
describe.runIf(postgresServerUrl())('PostgresListenConnection that silently stops delivering', () => {
  let writer: Database;
  let reader: Database;
  let proxy: PostgresWireProxy;
  let listen: PostgresListenConnection;
  let tokenState: TokenStateCache;
  let exchange: ExchangeContextCache;
  const logs = new LogCapture();
  const metrics = new BrokerMetrics(true);
  let agent: string;
  let loads = 0;
  let revocations: TokenStateRepository;
  let database: TokenStateRepository;

  beforeAll(async () => {
    const url = await createPostgresDatabase();
    const config = testConfig({ storage: { backend: 'postgres', postgres: { connection_url: url } } });
    writer = await Database.open(config, createLogger(config, new LogCapture()));
    reader = await Database.open(config, createLogger(config, new LogCapture()));
    proxy = await startPostgresWireProxy(url);
    // The reading replica's LISTEN connection goes through the proxy; its pool (the heartbeat's sender) does not.
    listen = new PostgresListenConnection(proxy.url, {
      notify: (channel, payload) => reader.dataSource.query('SELECT pg_notify($1, $2)', [channel, payload]),
      logger: createLogger(config, logs),
      heartbeatIntervalMs: 100,
      heartbeatDeadlineMs: 500,
    });
    listen.metrics = metrics;
    metrics.watchListenConnection(() => listen.down);
    tokenState = new TokenStateCache(listen);
    exchange = new ExchangeContextCache(listen);
    // Every read of the database, counted: one served from memory reads nothing.
    database = new TokenStateRepository(reader.dataSource);
    revocations = new TokenStateRepository(writer.dataSource, writer.tokenState);
    agent = randomUUID();
    await writer.dataSource.query("INSERT INTO agents (id, display_name) VALUES ($1, 'Agent')", [agent]);
    await read(keyOf(randomUUID()));
    await exchange.read('https://mail.example.com', 'nobody', agent, NOW.getTime(), () => Promise.resolve(undefined));
    await eventually(() => tokenState.active && exchange.active, Boolean, { waitingFor: 'the caches to serve' });
  });

  afterAll(async () => {
    await listen?.close();
    await proxy?.stop();
    await writer?.close();
    await reader?.close();
  });

  const keyOf = (jti: string): AccessTokenKey => ({ jti, familyId: undefined, principal: undefined, agentId: agent });
  const read = (key: AccessTokenKey) =>
    tokenState.read(key, NOW.getTime(), () => {
      loads += 1;
      return database.accessTokenFacts(key, NOW);
    });
  /** Database reads made by `work`. */
  const loadsOf = async (work: () => Promise<unknown>): Promise<number> => {
    const before = loads;
    await work();
    return loads - before;
  };
  /** The one LISTEN session open now, through the proxy. */
  const listenSession = (): ProxiedSession => {
    const sessions = proxy.sessions(LISTEN_APPLICATION);
    expect(sessions).toHaveLength(1);
    return sessions[0] as ProxiedSession;
  };
  /** A token that is served from memory, then revoked by another replica while `silence` keeps this one deaf. */
  const revokedWhileDeaf = async (
    silence: (session: ProxiedSession) => void | Promise<void>,
  ): Promise<AccessTokenKey> => {
    const key = keyOf(randomUUID());
    expect(await loadsOf(() => read(key))).toBe(1);
    expect(await loadsOf(() => read(key))).toBe(0);
    const session = listenSession();
    // Deaf before the revocation: else its notification could still arrive (a loaded machine).
    await silence(session);
    expect(await revocations.revokeAccessToken(key.jti, new Date(NOW.getTime() + 3_600_000))).toBe(true);
    // No notification can arrive: only the stopped cache shows the revocation.
    await eventually(async () => (await read(key)).revoked, Boolean, {
      timeoutMs: 10_000,
      waitingFor: 'the revocation to be read from the database',
    });
    expect(tokenState.active).toBe(false);
    expect(exchange.active).toBe(false);
    // The silent connection is ended rather than waited on, and a new one serves once its heartbeat came back.
    await eventually(() => session.closedByClient, Boolean, {
      timeoutMs: 10_000,
      waitingFor: 'the silent session to end',
    });
    await eventually(() => tokenState.active && exchange.active, Boolean, {
      timeoutMs: 10_000,
      waitingFor: 'the caches to serve again',
    });
    return key;
  };

  it('stops serving from memory when the socket goes half-open, ends it, and serves afresh once a new connection hears its heartbeat', async () => {
    const key = await revokedWhileDeaf((session) => session.freeze());
    // Caching resumed from empty: one read of the database, then memory.
    expect(await loadsOf(() => read(key))).toBe(1);
    expect(await loadsOf(() => read(key))).toBe(0);
    expect((await read(key)).revoked).toBe(true);
  });

  it('stops serving from memory when the session no longer listens (a transaction pooler), and serves afresh after a reconnect', async () => {
    const key = await revokedWhileDeaf((session) => session.runBehindClient('UNLISTEN *'));
    expect(await loadsOf(() => read(key))).toBe(1);
    expect(await loadsOf(() => read(key))).toBe(0);
  });

  it('tells the operator: one warning per outage and one line when it is back, a metric, and never the connection URL', async () => {
    const lines = logs.records();
    const down = lines.filter((line) => String(line.msg).startsWith('LISTEN connection down'));
    const back = lines.filter((line) => String(line.msg).startsWith('LISTEN connection back'));
    expect(down.map((line) => line.reason)).toEqual([
      'no heartbeat came back within 500 ms',
      'no heartbeat came back within 500 ms',
    ]);
    expect(down.every((line) => line.level === 'warn')).toBe(true);
    expect(back).toHaveLength(2);
    expect(logs.text).not.toContain(proxy.url);
    const { body } = await metrics.scrape();
    expect(body).toContain('\nbroker_db_listen_outages_total 2\n');
    expect(body).toContain('\nbroker_db_listen_down 0\n');
  });
});

/**
 * Subscribers joining a connection that is already up each send their own `LISTEN`. Two at
 * once (two caches' first lookups) must take turns on the one client: pg deprecates a query
 * sent while another runs, and a subscriber must not be told it listens before its `LISTEN` ran.
 */
describe.runIf(postgresServerUrl())('PostgresListenConnection with subscribers joining at once', () => {
  let database: Database;
  let listen: PostgresListenConnection;

  beforeAll(async () => {
    const url = await createPostgresDatabase();
    const config = testConfig({ storage: { backend: 'postgres', postgres: { connection_url: url } } });
    database = await Database.open(config, createLogger(config, new LogCapture()));
    listen = new PostgresListenConnection(url, {
      notify: (channel, payload) => database.dataSource.query('SELECT pg_notify($1, $2)', [channel, payload]),
      logger: createLogger(config, new LogCapture()),
    });
  });

  afterAll(async () => {
    await listen?.close();
    await database?.close();
  });

  it('sends one LISTEN at a time, and each subscriber listens once its subscription resolves', async () => {
    await listen.subscribe('joins_first', { notify: () => undefined, resync: () => undefined, lost: () => undefined });
    // Every query of every pg client while the two join: how many ran at once on one client.
    const running = new Map<object, number>();
    let overlapping = 0;
    const query = Client.prototype.query;
    Client.prototype.query = function (this: Client, ...args: unknown[]) {
      const now = (running.get(this) ?? 0) + 1;
      running.set(this, now);
      if (now > 1) overlapping += 1;
      const done = () => running.set(this, (running.get(this) ?? 1) - 1);
      const result = (query as (...a: unknown[]) => unknown).apply(this, args);
      if (result instanceof Promise) void result.then(done, done);
      else done();
      return result;
    } as typeof query;
    const heard: string[] = [];
    try {
      const joined = ['joins_second', 'joins_third'].map(async (channel) => {
        await listen.subscribe(channel, {
          notify: (payload) => heard.push(`${channel}:${payload}`),
          resync: () => undefined,
          lost: () => undefined,
        });
        return listen.isListening(channel);
      });
      expect(await Promise.all(joined)).toEqual([true, true]);
    } finally {
      Client.prototype.query = query;
    }
    expect(overlapping).toBe(0);
    await database.dataSource.query("SELECT pg_notify('joins_second', 'a'), pg_notify('joins_third', 'b')");
    await eventually(
      () => [...heard].sort(),
      (seen) => seen.length === 2,
      { waitingFor: 'both notifications' },
    );
    expect([...heard].sort()).toEqual(['joins_second:a', 'joins_third:b']);
  });
});
