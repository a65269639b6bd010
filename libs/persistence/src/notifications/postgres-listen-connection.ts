import { Client, type Notification } from 'pg';

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
/** Visible in `pg_stat_activity`; tests terminate the connection by this name. */
const APPLICATION_NAME = 'agent-identity-broker-listen';

/** Who hears one channel of the process's notification connection. */
export interface ChannelSubscriber {
  /** A `NOTIFY` on the channel was delivered, with its payload. */
  notify(payload: string | undefined): void;
  /** Notifications may have been missed (the connection was re-established): re-read everything. */
  resync(): void;
  /** The connection failed; it is being re-established. */
  lost(error: Error): void;
}

/** Stops one subscription; the connection closes when none is left. */
export type Unsubscribe = () => Promise<void>;

/**
 * PostgreSQL `LISTEN` for the whole process: one dedicated `pg.Client` outside the pool,
 * whatever the number of channels and subscribers (approvals sync, client cache). It connects
 * on the first subscription and ends when the last one leaves. When it fails it is
 * re-established with backoff (100 ms doubling to 5 s) and every subscriber is told to resync,
 * since notifications sent meanwhile are lost.
 */
export class PostgresListenConnection {
  private readonly subscribers = new Map<string, Set<ChannelSubscriber>>();
  private client: Client | undefined;
  /** Channels the current client has issued `LISTEN` for. */
  private listening = new Set<string>();
  private connecting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private attempt = 0;
  private everConnected = false;
  private closed = false;

  constructor(private readonly connectionUrl: string) {}

  /** Listens on `channel` for `subscriber`; resolves once `LISTEN` ran (or its failure is being retried). */
  async subscribe(channel: string, subscriber: ChannelSubscriber): Promise<Unsubscribe> {
    let set = this.subscribers.get(channel);
    if (set === undefined) {
      set = new Set();
      this.subscribers.set(channel, set);
    }
    set.add(subscriber);
    // While a reconnect is pending, that reconnect listens on the channel.
    if (this.client === undefined && this.retry === undefined) await this.connect();
    const client = this.client;
    if (client !== undefined) {
      // Joined a connection already open (or opening): its own LISTEN for this channel.
      // A failure ends the client, whose 'end' handler reconnects with a resync.
      await this.listenAll(client).catch(() => client.end().catch(() => undefined));
    }
    return async () => {
      set.delete(subscriber);
      if (set.size === 0) this.subscribers.delete(channel);
      if (this.subscribers.size === 0) await this.disconnect();
    };
  }

  /** Whether the connection is up and has issued `LISTEN` for `channel` (a subscriber may serve from memory). */
  isListening(channel: string): boolean {
    return this.client !== undefined && this.listening.has(channel);
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
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) await client.end().catch(() => undefined);
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    if (this.idle) return;
    const client = new Client({
      connectionString: this.connectionUrl,
      application_name: APPLICATION_NAME,
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    });
    let dead = false;
    const lose = (error: Error): void => {
      if (dead) return;
      dead = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      if (this.idle) return;
      for (const subscriber of this.everySubscriber()) subscriber.lost(error);
      this.scheduleReconnect();
    };
    // A pg Client without an 'error' listener would crash the process on a dropped socket.
    client.on('error', lose);
    client.on('end', () => lose(new Error('the LISTEN connection ended')));
    client.on('notification', (message: Notification) => {
      for (const subscriber of this.subscribers.get(message.channel) ?? []) subscriber.notify(message.payload);
    });
    this.listening = new Set();
    try {
      await client.connect();
      await this.listenAll(client);
    } catch (error) {
      lose(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (dead) return;
    if (this.idle) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.attempt = 0;
    const reconnected = this.everConnected;
    this.everConnected = true;
    if (reconnected) for (const subscriber of this.everySubscriber()) subscriber.resync();
  }

  /** Issues `LISTEN` for every subscribed channel the client does not listen on yet. */
  private async listenAll(client: Client): Promise<void> {
    const missing = [...this.subscribers.keys()].filter((channel) => !this.listening.has(channel));
    if (missing.length === 0) return;
    for (const channel of missing) this.listening.add(channel);
    // Channel names are our constants, never input: quoting them as identifiers is enough.
    await client.query(missing.map((channel) => `LISTEN "${channel}"`).join('; '));
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
