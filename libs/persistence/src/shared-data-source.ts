import { DataSource } from 'typeorm';

/**
 * The process's one TypeORM data source, opened by `Database.open` and lent to each Nest
 * application of the process (the end-user and the admin server) through
 * `TypeOrmModule.forRootAsync`'s `dataSourceFactory`.
 *
 * Why `destroy` is overridden: @nestjs/typeorm destroys the data source it was given when its
 * application shuts down (`TypeOrmCoreModule.onApplicationShutdown`). Here the data source is
 * shared, so the first server to close would close the pool under the second, and before
 * `Database.close` has written the activity ledger's queued events. So `destroy` returns one
 * holder's hold: an application's (taken by `lend`) or the `Database`'s own (taken at
 * `initialize`), and the pool closes when the last hold is returned. The `Database` lets go
 * last: `Database.close` flushes the ledger, then ends the data source with `destroyAll`,
 * also when an application still holds it (one whose start failed before it could be
 * closed): the database is closing, so nobody can use it any more.
 */
export class SharedDataSource extends DataSource {
  private holds = 0;

  /** The number of holders that have not let go yet (the `Database` included). */
  get holders(): number {
    return this.holds;
  }

  override async initialize(): Promise<this> {
    await super.initialize();
    // The opener's hold (`Database`), returned by its `close`.
    this.holds = 1;
    return this;
  }

  /** One more holder (an application's TypeORM module): its `destroy` returns the hold. */
  lend(): this {
    if (!this.isInitialized) throw new Error('the database is closed: its data source cannot be lent');
    this.holds += 1;
    return this;
  }

  /** Returns one hold; the pool closes with the last one. */
  override async destroy(): Promise<void> {
    if (this.holds > 0) this.holds -= 1;
    if (this.holds === 0 && this.isInitialized) await super.destroy();
  }

  /** Closes the pool whoever still holds it (`Database.close`, after its own work on it). */
  async destroyAll(): Promise<void> {
    this.holds = 0;
    if (this.isInitialized) await super.destroy();
  }
}
