import type { PostgresListenConnection, Unsubscribe } from '../notifications/postgres-listen-connection';
import { acquirePglite, releasePglite, type SharedPglite } from '../pglite/pglite-instances';

/** The channel the approvals triggers notify on (payload: the new sync version). */
export const APPROVALS_CHANNEL = 'approvals_changed';
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

function deliver(listener: ApprovalChangeListener, payload: string | undefined): void {
  const version = versionOf(payload);
  if (version === undefined) listener.resync();
  else listener.changed(version);
}

/**
 * PostgreSQL: `LISTEN approvals_changed` on the process's one notification connection
 * (shared with the caches). After a reconnect the listener is
 * told to resync, since notifications sent meanwhile are lost.
 */
export class PostgresApprovalChangeFeed extends ApprovalChangeFeed {
  private unsubscribe: Unsubscribe | undefined;

  constructor(private readonly connection: PostgresListenConnection) {
    super();
  }

  async start(listener: ApprovalChangeListener): Promise<void> {
    this.unsubscribe = await this.connection.subscribe(APPROVALS_CHANNEL, {
      notify: (payload) => deliver(listener, payload),
      resync: () => listener.resync(),
      lost: (error) => listener.lost(error),
    });
  }

  async stop(): Promise<void> {
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = undefined;
    await unsubscribe?.();
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
