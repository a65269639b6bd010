import { EventEmitter } from 'node:events';
import { traceStatement } from '@broker/telemetry';
import type { SharedPglite } from './pglite-instances';

/** The subset of a node-postgres query result TypeORM reads. */
export interface PgShapeResult {
  rows: Record<string, unknown>[];
  rowCount: number;
  command: string;
  fields: { name: string; dataTypeID: number }[];
}

type ConnectCallback = (error: Error | undefined, client?: PgliteClient, release?: (error?: unknown) => void) => void;

const BEGIN = /^\s*(BEGIN|START\s+TRANSACTION)\b/i;
const END = /^\s*(COMMIT|ROLLBACK|END|ABORT)\s*;?\s*$/i;

/**
 * A node-postgres-shaped client over the shared PGlite connection. It exists only
 * while its holder owns the exclusive lock.
 */
export class PgliteClient extends EventEmitter {
  /** True between BEGIN and COMMIT/ROLLBACK, so a release can roll back what was left open. */
  inTransaction = false;

  constructor(private readonly shared: SharedPglite) {
    super();
  }

  async query(text: string, params?: unknown[]): Promise<PgShapeResult> {
    // A `db <OPERATION>` span of the current request when tracing is enabled (one comparison when not).
    const result = await traceStatement(text, () => this.shared.db.query<Record<string, unknown>>(text, params ?? []));
    if (BEGIN.test(text)) this.inTransaction = true;
    else if (END.test(text)) this.inTransaction = false;
    const rowCount = result.affectedRows ?? result.rows.length;
    return {
      rows: result.rows,
      rowCount: result.rows.length > rowCount ? result.rows.length : rowCount,
      command: (result as { command?: string }).command ?? firstKeyword(text),
      fields: result.fields.map((field) => ({ name: field.name, dataTypeID: field.dataTypeID })),
    };
  }
}

function firstKeyword(text: string): string {
  return (/^\s*([A-Za-z]+)/.exec(text)?.[1] ?? '').toUpperCase();
}

/**
 * A node-postgres-shaped pool over one PGlite instance that hands out one exclusive
 * connection at a time (TypeORM's postgres driver takes it as `driver.Pool`).
 * Sharing PGlite's single connection among concurrent transactions would let one
 * transaction see another's uncommitted rows; waiting for the lock cannot.
 * Rule that follows: inside a transaction use only that transaction's EntityManager,
 * or the second acquisition waits for the first (and times out).
 */
export class PglitePool extends EventEmitter {
  private ended = false;
  /** Told how long each acquisition waited for the exclusive connection (set by `Database.instrument`). */
  onWait: ((seconds: number) => void) | undefined;

  constructor(
    private readonly shared: SharedPglite,
    private readonly acquireTimeoutMs: number,
  ) {
    super();
  }

  connect(): Promise<PgliteClient>;
  connect(callback: ConnectCallback): void;
  connect(callback?: ConnectCallback): Promise<PgliteClient> | void {
    const acquired = this.acquire();
    if (callback === undefined) return acquired.then(({ client }) => client);
    acquired.then(
      ({ client, release }) => callback(undefined, client, release),
      (error: Error) => callback(error),
    );
  }

  async query(text: string, params?: unknown[]): Promise<PgShapeResult> {
    const { client, release } = await this.acquire();
    try {
      return await client.query(text, params);
    } finally {
      release();
    }
  }

  end(callback?: (error?: Error) => void): Promise<void> | void {
    this.ended = true;
    if (callback) callback();
    else return Promise.resolve();
  }

  private async acquire(): Promise<{ client: PgliteClient; release: (error?: unknown) => void }> {
    if (this.ended) throw new Error('the embedded database pool has been closed');
    const waitStarted = this.onWait === undefined ? 0 : performance.now();
    const unlock = await this.shared.lock.acquire(this.acquireTimeoutMs);
    this.onWait?.((performance.now() - waitStarted) / 1000);
    const client = new PgliteClient(this.shared);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      if (!client.inTransaction) {
        unlock();
        return;
      }
      // A holder that leaves a transaction open must not hand it to the next caller.
      this.shared.db
        .query('ROLLBACK')
        .finally(unlock)
        .catch(() => undefined);
    };
    return { client, release };
  }
}

/** A stand-in for the `pg` module whose `Pool` is bound to one shared PGlite instance. */
export function pgliteDriverModule(shared: SharedPglite, acquireTimeoutMs: number): { Pool: new () => PglitePool } {
  return {
    Pool: class BoundPglitePool extends PglitePool {
      constructor() {
        super(shared, acquireTimeoutMs);
      }
    },
  };
}
