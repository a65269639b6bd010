import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { BrokerConfig } from '@broker/config';
import { EventLedger, type EventSettings } from '@broker/events';
import type { BrokerMetrics } from '@broker/telemetry';
import type { Logger } from 'pino';
import { MigrationExecutor, type DataSourceOptions, type EntityManager } from 'typeorm';
import type { LoggerOptions } from 'typeorm/logger/LoggerOptions';
import { ENTITIES } from './entities';
import { EventRepository } from './events/event.repository';
import { InstallationRepository, type Installation } from './installation/installation.repository';
import { MIGRATIONS } from './migrations';
import { PostgresListenConnection } from './notifications/postgres-listen-connection';
import { acquirePglite, releasePglite, type SharedPglite } from './pglite/pglite-instances';
import { pgliteDriverModule } from './pglite/pglite-pool';
import { databaseReaders } from './metrics/database-gauges';
import { ClientCache } from './registry/client-cache';
import { EXCHANGE_CHANNEL, ExchangeContextCache } from './registry/exchange-context-cache';
import { ResourceCatalog } from './registry/resource-catalog';
import { TokenStateCache } from './registry/token-state-cache';
import { SharedDataSource } from './shared-data-source';
import { TracedPgClient } from './traced-pg-client';
import { TypeOrmPinoLogger } from './typeorm-logger';

/** Advisory-lock key held while migrations run, so replicas starting together take turns. */
const MIGRATION_LOCK_KEY = 7_316_425_001;
const PGLITE_ACQUIRE_TIMEOUT_MS = 30_000;

export type StorageBackend = BrokerConfig['storage']['backend'];

/**
 * The broker's database: one TypeORM data source over PostgreSQL (pg pool) or PGlite
 * (embedded, one exclusive connection). Open it once per process and share it: it also
 * holds what the process's servers share above the data source (the notification
 * connection, the caches, the activity ledger writer). Each server's `PersistenceModule`
 * borrows the data source (`SharedDataSource`); `close` ends it, after the servers.
 */
export class Database {
  private closed = false;
  /**
   * Internal to `libs/persistence`: the process's one `LISTEN` connection (PostgreSQL),
   * shared by the approvals change feed and the caches.
   */
  readonly notifications: PostgresListenConnection | undefined;
  /**
   * Internal to `libs/persistence`: the token endpoint's client cache, one per process so
   * a write through either server clears what the other reads (provided to both); other
   * replicas' writes clear it by notification (PostgreSQL).
   */
  readonly clientCache: ClientCache;
  /**
   * Internal to `libs/persistence`: the protected resources by URI (the authorization and
   * token endpoints' `resource` lookups), one per process like `clientCache`.
   */
  readonly resourceCatalog: ResourceCatalog;
  /**
   * Internal to `libs/persistence`: the token exchange's grant and session reads, kept while
   * the notification connection listens (PostgreSQL only; none on PGlite).
   */
  readonly exchangeCache: ExchangeContextCache | undefined;
  /**
   * Internal to `libs/persistence`: introspection's revocation and grant reads, kept while
   * the notification connection listens (PostgreSQL only; none on PGlite).
   */
  readonly tokenState: TokenStateCache | undefined;
  /**
   * The process's one activity ledger writer (one hot-path queue and flusher for
   * both servers), flushed by `close` before the data source goes.
   */
  readonly events: EventLedger;

  private constructor(
    /**
     * Internal to `libs/persistence`: repositories are built on it (injected by
     * `PersistenceModule`), nothing else sees it.
     */
    readonly dataSource: SharedDataSource,
    readonly backend: StorageBackend,
    private readonly logger: Logger,
    private readonly pglite: SharedPglite | undefined,
    listenUrl: string | undefined,
    events: EventSettings,
  ) {
    // Connects only when something subscribes: CLIs and the admin API open no LISTEN connection.
    this.notifications =
      listenUrl === undefined
        ? undefined
        : new PostgresListenConnection(listenUrl, {
            // The heartbeat goes over the pool, the way every other session's notification comes.
            notify: (channel, payload) => dataSource.query('SELECT pg_notify($1, $2)', [channel, payload]),
            logger: logger.child({ component: 'listen' }),
          });
    this.clientCache = new ClientCache(this.notifications);
    this.resourceCatalog = new ResourceCatalog(this.notifications);
    this.exchangeCache = this.notifications === undefined ? undefined : new ExchangeContextCache(this.notifications);
    this.tokenState = this.notifications === undefined ? undefined : new TokenStateCache(this.notifications);
    this.events = new EventLedger(new EventRepository(dataSource), events, logger.child({ component: 'event-ledger' }));
  }

  /** Connects (and, unless disabled by config, applies pending migrations). */
  static async open(
    config: BrokerConfig,
    logger: Logger,
    options: { runMigrations?: boolean } = {},
  ): Promise<Database> {
    const storage = config.storage;
    const base = {
      type: 'postgres' as const,
      entities: ENTITIES,
      migrations: MIGRATIONS,
      migrationsTableName: 'broker_migrations',
      synchronize: false,
      migrationsRun: false,
      installExtensions: false,
      logging: ['error', 'warn', 'migration'] as LoggerOptions,
      logger: new TypeOrmPinoLogger(logger.child({ component: 'database' })),
    };
    let pglite: SharedPglite | undefined;
    let dataSourceOptions: DataSourceOptions;
    if (storage.backend === 'pglite') {
      pglite = await acquirePglite(storage.pglite.data_dir, storage.pglite.initial_data);
      dataSourceOptions = {
        ...base,
        driver: pgliteDriverModule(pglite, PGLITE_ACQUIRE_TIMEOUT_MS),
        database: 'postgres',
      };
    } else {
      dataSourceOptions = {
        ...base,
        url: storage.postgres.connection_url,
        poolSize: storage.postgres.pool_size,
        connectTimeoutMS: 5_000,
        applicationName: 'agent-identity-broker',
        // With tracing enabled, the pool's clients trace their statements (pg's own client otherwise).
        ...(config.telemetry.tracing.enabled ? { extra: { Client: TracedPgClient } } : {}),
      };
    }
    const dataSource = new SharedDataSource(dataSourceOptions);
    try {
      await dataSource.initialize();
    } catch (error) {
      if (pglite) await releasePglite(pglite);
      throw error;
    }
    const listenUrl = storage.backend === 'postgres' ? storage.postgres.connection_url : undefined;
    const database = new Database(dataSource, storage.backend, logger, pglite, listenUrl, config.events);
    if (options.runMigrations ?? config.storage.migrations.run_on_start) {
      try {
        await database.migrate();
      } catch (error) {
        await database.close();
        throw error;
      }
    }
    return database;
  }

  /**
   * Applies pending migrations in one transaction under an advisory lock (replicas
   * starting at once take turns; the second finds nothing to do). Returns their names.
   */
  async migrate(): Promise<string[]> {
    return this.withMigrationLock(async (executor) => {
      executor.transaction = 'all';
      const applied = await executor.executePendingMigrations();
      if (applied.length > 0)
        this.logger.info({ migrations: applied.map((m) => m.name) }, `applied ${applied.length} migration(s)`);
      return applied.map((m) => m.name);
    });
  }

  /** Reverts every applied migration, newest first (tests and operators only). */
  async revertAll(): Promise<number> {
    return this.withMigrationLock(async (executor) => {
      executor.transaction = 'each';
      let reverted = 0;
      while ((await executor.getExecutedMigrations()).length > 0) {
        await executor.undoLastMigration();
        reverted += 1;
      }
      return reverted;
    });
  }

  /**
   * PGlite only: writes the data directory as an uncompressed tarball to `file`, what
   * `storage.pglite.initial_data` seeds a new database with (docs/configuration.md). The
   * dump is taken while holding the one connection, so no transaction is half in it.
   */
  async dumpPglite(file: string): Promise<void> {
    if (this.pglite === undefined) throw new Error('dumpPglite: the database is not PGlite');
    const release = await this.pglite.lock.acquire(PGLITE_ACQUIRE_TIMEOUT_MS);
    try {
      const dump = await this.pglite.db.dumpDataDir('none');
      await writeFile(file, Buffer.from(await dump.arrayBuffer()), { mode: 0o600 });
    } finally {
      release();
    }
  }

  /** Names of the applied migrations, oldest first. */
  async appliedMigrations(): Promise<string[]> {
    return this.withMigrationLock(async (executor) =>
      (await executor.getExecutedMigrations()).map((m) => m.name).reverse(),
    );
  }

  /**
   * Reports to the process's metrics (called once at boot): the database gauges'
   * reads, the caches' lookups, the LISTEN connection's state, and PGlite's connection waits.
   */
  instrument(metrics: BrokerMetrics): void {
    if (!metrics.enabled) return;
    metrics.setDatabaseReaders(databaseReaders(this.dataSource, this.pglite?.lock));
    this.clientCache.metrics = metrics;
    this.resourceCatalog.metrics = metrics;
    if (this.exchangeCache !== undefined) this.exchangeCache.metrics = metrics;
    if (this.tokenState !== undefined) this.tokenState.metrics = metrics;
    const notifications = this.notifications;
    if (notifications !== undefined) {
      notifications.metrics = metrics;
      metrics.watchListenConnection(() => notifications.down);
    }
    this.events.metrics = metrics;
    const pool = (this.dataSource.driver as unknown as { master?: { onWait?: (seconds: number) => void } }).master;
    if (this.pglite !== undefined && pool !== undefined) pool.onWait = (seconds) => metrics.pgliteWait(seconds);
  }

  /**
   * Resolves once this process has heard every `exchange_changed` notification committed
   * before the call: a marker sent now arrives after them on the one notification
   * connection. For whoever writes the token exchange's rows behind the broker's back (an
   * operator's SQL, a test) and needs the next request to see them; nothing to wait for
   * when the exchange serves nothing from memory.
   */
  async settleNotifications(timeoutMs = 5_000): Promise<void> {
    if (this.notifications === undefined || this.exchangeCache?.active !== true) return;
    const marker = `settle-${randomUUID()}`;
    let heard: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (heard = resolve));
    const unsubscribe = await this.notifications.subscribe(EXCHANGE_CHANNEL, {
      notify: (payload) => payload === marker && heard(),
      resync: () => heard(),
      lost: () => heard(),
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      await this.dataSource.query('SELECT pg_notify($1, $2)', [EXCHANGE_CHANNEL, marker]);
      await Promise.race([
        arrived,
        new Promise<void>(
          (_, reject) =>
            (timer = setTimeout(() => reject(new Error('the notification connection did not answer')), timeoutMs)),
        ),
      ]);
    } finally {
      clearTimeout(timer);
      await unsubscribe();
    }
  }

  /** Runs `work` in one transaction; inside it, use only the given manager. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** Answers within `timeoutMs` or throws: the health check's database probe. */
  async ping(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`database did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.dataSource.query('SELECT 1'), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** This deployment's installation record (created on first start). */
  installation(): Promise<Installation> {
    return new InstallationRepository(this.dataSource).ensure();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      // The hot-path events still queued are written while the data source is open (the
      // servers' `destroy` at their shutdown only returned their hold: see SharedDataSource).
      if (this.dataSource.isInitialized) await this.events.close();
      await this.notifications?.close();
      await this.dataSource.destroyAll();
    } finally {
      if (this.pglite) await releasePglite(this.pglite);
    }
  }

  private async withMigrationLock<T>(work: (executor: MigrationExecutor) => Promise<T>): Promise<T> {
    const queryRunner = this.dataSource.createQueryRunner('master');
    try {
      await queryRunner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      try {
        return await work(new MigrationExecutor(this.dataSource, queryRunner));
      } finally {
        await queryRunner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      }
    } finally {
      await queryRunner.release();
    }
  }
}
