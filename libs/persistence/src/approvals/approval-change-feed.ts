import { Client, type Notification } from 'pg';
import { acquirePglite, releasePglite, type SharedPglite } from '../pglite/pglite-instances';

/** The channel the approvals triggers notify on (payload: the new sync version). */
export const APPROVALS_CHANNEL = 'approvals_changed';
/** The channel of committed token-endpoint client changes (agents, assignments, secrets). */
export const REGISTRY_CHANNEL = 'registry_changed';

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const PGLITE_LOCK_TIMEOUT_MS = 30_000;

/** Who hears about committed approval changes. */
export interface ApprovalChangeListener {
  /** A committed change made the sync version `version`. */
  changed(version: number): void;
  /** Notifications may have been missed (a reconnect): everything must be re-read. */
  resync(): void;
  /** The notification connection failed; it is being re-established. */
  lost(error: Error): void;
}

/**
 * Committed approval changes of every process on the same database, as the triggers'
 * `NOTIFY approvals_changed` delivers them: one listening connection per process.
 */
export abstract class ApprovalChangeFeed {
  abstract start(listener: ApprovalChangeListener): Promise<void>;
  abstract stop(): Promise<void>;
}

function versionOf(payload: string | undefined): number | undefined {
  const version = Number(payload);
  return payload !== undefined && payload !== '' && Number.isSafeInteger(version) ? version : undefined;
}

function deliver(listener: ApprovalChangeListener | undefined, payload: string | undefined): void {
  const version = versionOf(payload);
  if (version === undefined) listener?.resync();
  else listener?.changed(version);
}

/**
 * PostgreSQL: one dedicated `pg.Client` outside the pool holds `LISTEN approvals_changed`
 * and `LISTEN registry_changed` (the process's one notification connection). When it fails
 * it is re-established with backoff (100 ms doubling to 5 s); after a reconnect the listener
 * is told to resync and `registryChanged` runs, since notifications sent meanwhile are lost.
 */
export class PostgresApprovalChangeFeed extends ApprovalChangeFeed {
  private client: Client | undefined;
  private listener: ApprovalChangeListener | undefined;
  private stopped = false;
  private attempt = 0;
  private retry: NodeJS.Timeout | undefined;
  private everConnected = false;

  /** `registryChanged`: another replica changed a client (or notifications were missed). */
  constructor(
    private readonly connectionUrl: string,
    private readonly registryChanged: () => void = () => undefined,
  ) {
    super();
  }

  async start(listener: ApprovalChangeListener): Promise<void> {
    this.listener = listener;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) await client.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.connectionUrl, application_name: 'agent-identity-broker-listen', connectionTimeoutMillis: 5_000, keepAlive: true });
    let dead = false;
    const lose = (error: Error): void => {
      if (dead) return;
      dead = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      if (this.stopped) return;
      this.listener?.lost(error);
      this.scheduleReconnect();
    };
    // A pg Client without an 'error' listener would crash the process on a dropped socket.
    client.on('error', lose);
    client.on('end', () => lose(new Error('the approvals LISTEN connection ended')));
    client.on('notification', (message: Notification) => {
      if (message.channel === APPROVALS_CHANNEL) deliver(this.listener, message.payload);
      else if (message.channel === REGISTRY_CHANNEL) this.registryChanged();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${APPROVALS_CHANNEL}; LISTEN ${REGISTRY_CHANNEL}`);
    } catch (error) {
      lose(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (dead) return;
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.attempt = 0;
    const reconnected = this.everConnected;
    this.everConnected = true;
    if (reconnected) {
      this.registryChanged();
      this.listener?.resync();
    }
  }

  private scheduleReconnect(): void {
    clearTimeout(this.retry);
    const delay = Math.min(RECONNECT_MIN_MS * 2 ** this.attempt, RECONNECT_MAX_MS);
    this.attempt += 1;
    this.retry = setTimeout(() => {
      // A first connection that failed counts as a reconnect too: changes may have been missed.
      this.everConnected = true;
      void this.connect();
    }, delay);
    this.retry.unref();
  }
}

/**
 * PGlite (one process by construction): its in-process `listen()` on the process's shared
 * instance. The LISTEN statement takes the instance's exclusive lock, so it never runs
 * inside another caller's open transaction.
 */
export class PgliteApprovalChangeFeed extends ApprovalChangeFeed {
  private shared: SharedPglite | undefined;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(private readonly dataDir: string) {
    super();
  }

  async start(listener: ApprovalChangeListener): Promise<void> {
    const shared = await acquirePglite(this.dataDir);
    this.shared = shared;
    const release = await shared.lock.acquire(PGLITE_LOCK_TIMEOUT_MS);
    try {
      this.unlisten = await shared.db.listen(APPROVALS_CHANNEL, (payload) => deliver(listener, payload));
    } finally {
      release();
    }
  }

  async stop(): Promise<void> {
    const { shared, unlisten } = this;
    this.shared = undefined;
    this.unlisten = undefined;
    if (shared === undefined) return;
    try {
      if (unlisten !== undefined && !shared.db.closed) {
        const release = await shared.lock.acquire(PGLITE_LOCK_TIMEOUT_MS);
        try {
          await unlisten();
        } finally {
          release();
        }
      }
    } finally {
      await releasePglite(shared);
    }
  }
}
