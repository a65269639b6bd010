import { AsyncResource } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import type { BrokerMetrics } from '@broker/telemetry';
import { Client, type Notification } from 'pg';
import type { Logger } from 'pino';

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** TCP keep-alive probes start after this long without a byte from the server. */
const KEEPALIVE_INITIAL_DELAY_MS = 5_000;
/** How long an ending connection may take to say goodbye before its socket is destroyed (a half-open one never does). */
const END_GRACE_MS = 1_000;
/** How often a heartbeat goes round while the connection is up (docs/operating.md "The LISTEN connection"). */
export const LISTEN_HEARTBEAT_INTERVAL_MS = 2_000;
/** How long a heartbeat may take to come back before the connection counts as down. */
export const LISTEN_HEARTBEAT_DEADLINE_MS = 3_000;
/** Visible in `pg_stat_activity`; tests terminate the connection by this name. */
const APPLICATION_NAME = 'agent-identity-broker-listen';

/** Who hears one channel of the process's notification connection. */
export interface ChannelSubscriber {
  /** A `NOTIFY` on the channel was delivered, with its payload. */
  notify(payload: string | undefined): void;
  /** Notifications may have been missed (the connection was re-established): re-read everything. */
  resync(): void;
  /** The connection failed or stopped delivering; it is being re-established. */
  lost(error: Error): void;
}

/** Stops one subscription; the connection closes when none is left. */
export type Unsubscribe = () => Promise<void>;

export interface ListenConnectionOptions {
  /**
   * Sends `NOTIFY channel, payload` over another connection than the LISTEN one (the pool):
   * the heartbeat takes the path every other session's notification takes, so a LISTEN
   * session that a transaction-pooling proxy moved away, or a half-open socket, is caught.
   */
  readonly notify: (channel: string, payload: string) => Promise<unknown>;
  /** Down and up lines; never the connection URL. */
  readonly logger: Logger;
  readonly heartbeatIntervalMs?: number;
  readonly heartbeatDeadlineMs?: number;
}

/** The connection while it is up. */
interface Session {
  readonly client: Client;
  /** Ends it as failed: subscribers are told, a reconnect is scheduled. */
  readonly lose: (error: Error) => void;
  /** Ends it: a goodbye, then the socket destroyed after `END_GRACE_MS` at most. */
  readonly end: () => Promise<void>;
}

/** The heartbeat in flight: sent, not heard yet. */
interface PendingBeat {
  readonly client: Client;
  readonly payload: string;
  readonly heard: () => void;
  readonly failed: (error: Error) => void;
}

/**
 * PostgreSQL `LISTEN` for the whole process: one dedicated `pg.Client` outside the pool,
 * whatever the number of channels and subscribers (approvals sync, the caches). It connects
 * on the first subscription and ends when the last one leaves.
 *
 * A socket that stays open proves nothing (a half-open TCP connection, or a transaction
 * pooler that ran `LISTEN` on a server connection it then gave to someone else), so the
 * connection counts as up only while its heartbeat comes back: it listens on a channel of its
 * own, and every `heartbeatIntervalMs` a `NOTIFY` on it is sent over the pool and must arrive
 * within `heartbeatDeadlineMs`. After a connect, the connection is up once the first heartbeat
 * came back. When it fails or a heartbeat is late it is ended (the socket destroyed: a
 * half-open one never answers a goodbye), every subscriber is told it was lost, and it is
 * re-established with backoff (100 ms doubling to 5 s, reset once a heartbeat came back);
 * once up again every subscriber is told to resync, since notifications sent meanwhile are lost.
 */
export class PostgresListenConnection {
  private readonly subscribers = new Map<string, Set<ChannelSubscriber>>();
  /** The connection while it is up: `LISTEN` ran and its heartbeat came back. */
  private session: Session | undefined;
  /** Channels the current client has issued `LISTEN` for. */
  private listening = new Set<string>();
  /** The last `listenAll` of the current client: the next one waits for it. */
  private listenTurn: Promise<void> = Promise.resolve();
  private connecting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private attempt = 0;
  private everConnected = false;
  private closed = false;
  /** A down line was logged and not followed by an up line yet. */
  private reportedDown = false;
  /** This instance's own channel: only its own heartbeats arrive on it. */
  private readonly heartbeatChannel = `broker_listen_heartbeat_${randomBytes(8).toString('hex')}`;
  private beat: PendingBeat | undefined;
  private sequence = 0;
  private readonly intervalMs: number;
  private readonly deadlineMs: number;
  /** Heartbeats run outside the request that happened to open the connection (its trace, its query count). */
  private readonly background = new AsyncResource('PostgresListenConnection');
  /** Counts outages when set (`Database.instrument`). */
  metrics: BrokerMetrics | undefined;

  constructor(
    private readonly connectionUrl: string,
    private readonly options: ListenConnectionOptions,
  ) {
    this.intervalMs = options.heartbeatIntervalMs ?? LISTEN_HEARTBEAT_INTERVAL_MS;
    this.deadlineMs = options.heartbeatDeadlineMs ?? LISTEN_HEARTBEAT_DEADLINE_MS;
  }

  /** Listens on `channel` for `subscriber`; resolves once the connection is up (or its failure is being retried). */
  async subscribe(channel: string, subscriber: ChannelSubscriber): Promise<Unsubscribe> {
    let set = this.subscribers.get(channel);
    if (set === undefined) {
      set = new Set();
      this.subscribers.set(channel, set);
    }
    set.add(subscriber);
    // While a reconnect is pending, that reconnect listens on the channel.
    if (this.session === undefined && this.retry === undefined) await this.connect();
    const session = this.session;
    if (session !== undefined) {
      // Joined a connection already up: its own LISTEN for this channel. A failure ends the
      // client and reconnects with a resync.
      await this.listenAll(session.client).catch((error: unknown) => session.lose(asError(error)));
    }
    return async () => {
      set.delete(subscriber);
      if (set.size === 0) this.subscribers.delete(channel);
      if (this.subscribers.size === 0) await this.disconnect();
    };
  }

  /**
   * Whether the connection is up (its heartbeat came back) and has issued `LISTEN` for
   * `channel`: a subscriber may serve from memory.
   */
  isListening(channel: string): boolean {
    return this.session !== undefined && this.listening.has(channel);
  }

  /** Someone subscribed, and the connection is not up (connecting, or down and reconnecting). */
  get down(): boolean {
    return !this.idle && this.session === undefined;
  }

  /** Ends the connection for good (the database closes). */
  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
    await this.disconnect();
  }

  private get idle(): boolean {
    return this.closed || this.subscribers.size === 0;
  }

  private async disconnect(): Promise<void> {
    clearTimeout(this.retry);
    this.retry = undefined;
    this.attempt = 0;
    // The next subscription starts afresh: nothing was listened for meanwhile.
    this.everConnected = false;
    this.reportedDown = false;
    const session = this.session;
    this.session = undefined;
    await session?.end();
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    if (this.idle) return;
    let socket: Socket | undefined;
    const client = new Client({
      connectionString: this.connectionUrl,
      application_name: APPLICATION_NAME,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // A vanished peer is found by the kernel too, not only by the heartbeat.
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
      // Ours, so that a half-open socket can be destroyed: pg's end() waits for the peer.
      stream: () => (socket = new Socket()),
    });
    const end = async (): Promise<void> => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        client.end().catch(() => undefined),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, END_GRACE_MS))),
      ]);
      clearTimeout(timer);
      socket?.destroy();
    };
    let dead = false;
    const lose = (error: Error): void => {
      if (dead) return;
      dead = true;
      if (this.session?.client === client) this.session = undefined;
      if (this.beat?.client === client) this.beat.failed(error);
      void end();
      if (this.idle) return;
      this.reportDown(error);
      for (const subscriber of this.everySubscriber()) subscriber.lost(error);
      this.scheduleReconnect();
    };
    // A pg Client without an 'error' listener would crash the process on a dropped socket.
    client.on('error', lose);
    client.on('end', () => lose(new Error('the LISTEN connection ended')));
    client.on('notification', (message: Notification) => {
      if (message.channel === this.heartbeatChannel) {
        if (this.beat?.client === client && this.beat.payload === message.payload) this.beat.heard();
        return;
      }
      for (const subscriber of this.subscribers.get(message.channel) ?? []) subscriber.notify(message.payload);
    });
    this.listening = new Set();
    this.listenTurn = Promise.resolve();
    try {
      await client.connect();
      await this.listenAll(client);
      await this.roundTrip(client);
    } catch (error) {
      lose(asError(error));
      return;
    }
    if (dead) return;
    if (this.idle) {
      await end();
      return;
    }
    this.session = { client, lose, end };
    this.attempt = 0;
    this.reportUp();
    this.background.runInAsyncScope(() => void this.keepBeating(client, lose));
    const reconnected = this.everConnected;
    this.everConnected = true;
    if (reconnected) for (const subscriber of this.everySubscriber()) subscriber.resync();
  }

  /** Sends heartbeats while `client` is the connection; a late one ends it. */
  private async keepBeating(client: Client, lose: (error: Error) => void): Promise<void> {
    while (this.session?.client === client) {
      await new Promise<void>((resolve) => setTimeout(resolve, this.intervalMs).unref());
      if (this.session?.client !== client) return;
      try {
        await this.roundTrip(client);
      } catch (error) {
        lose(asError(error));
        return;
      }
    }
  }

  /** Resolves when a `NOTIFY` sent over the pool arrived on `client` within the deadline. */
  private roundTrip(client: Client): Promise<void> {
    this.sequence += 1;
    const payload = String(this.sequence);
    return new Promise<void>((resolve, reject) => {
      const settle = (error?: Error): void => {
        clearTimeout(deadline);
        if (this.beat?.payload === payload) this.beat = undefined;
        if (error === undefined) resolve();
        else reject(error);
      };
      const deadline = setTimeout(
        () => settle(new Error(`no heartbeat came back within ${this.deadlineMs} ms`)),
        this.deadlineMs,
      );
      deadline.unref();
      this.beat = { client, payload, heard: () => settle(), failed: settle };
      // A failed send is judged by the deadline like a lost notification.
      this.background.runInAsyncScope(
        () => void this.options.notify(this.heartbeatChannel, payload).catch(() => undefined),
      );
    });
  }

  /**
   * Issues `LISTEN` for the heartbeat channel and every subscribed channel the client does not
   * listen on yet. Calls take turns on the client (two caches subscribing at once must not send
   * a query while another runs, which pg deprecates), and each resolves only once the `LISTEN`
   * naming its channels has run.
   */
  private listenAll(client: Client): Promise<void> {
    const turn = this.listenTurn.then(() => this.listenMissing(client));
    this.listenTurn = turn.catch(() => undefined);
    return turn;
  }

  private async listenMissing(client: Client): Promise<void> {
    const missing = [this.heartbeatChannel, ...this.subscribers.keys()].filter(
      (channel) => !this.listening.has(channel),
    );
    if (missing.length === 0) return;
    // Channel names are our constants, never input: quoting them as identifiers is enough.
    await client.query(missing.map((channel) => `LISTEN "${channel}"`).join('; '));
    // Listening from now on (`isListening`), not from when the statement was sent.
    for (const channel of missing) this.listening.add(channel);
  }

  private reportDown(error: Error): void {
    if (this.reportedDown) return;
    this.reportedDown = true;
    this.metrics?.listenConnectionDown();
    // The message only: a connection error's other fields may carry the URL.
    this.options.logger.warn(
      { reason: error.message },
      'LISTEN connection down: the caches it keeps current read the database until it is back',
    );
  }

  private reportUp(): void {
    const wasDown = this.reportedDown;
    this.reportedDown = false;
    this.options.logger.info(
      wasDown
        ? 'LISTEN connection back: heartbeat verified, the caches start afresh'
        : 'LISTEN connection up: heartbeat verified',
    );
  }

  private *everySubscriber(): Iterable<ChannelSubscriber> {
    for (const set of [...this.subscribers.values()]) yield* [...set];
  }

  private scheduleReconnect(): void {
    clearTimeout(this.retry);
    const delay = Math.min(RECONNECT_MIN_MS * 2 ** this.attempt, RECONNECT_MAX_MS);
    this.attempt += 1;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      // A first connection that failed counts as a reconnect too: changes may have been missed.
      this.everConnected = true;
      void this.connect();
    }, delay);
    this.retry.unref();
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
