import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';

/** What a transaction's work may ask of the transaction besides its statements. */
export interface TransactionScope {
  /**
   * Runs `callback` once the transaction has committed, before `Transactions.run` returns;
   * never when the work failed (ROLLBACK: nothing was written). See `Transactions.run` for a
   * COMMIT that fails. Callbacks run in the order they were registered, each on its own: one
   * that throws is logged and the others still run.
   */
  afterCommit(callback: () => void): void;
}

/**
 * Runs a repository's write in one transaction, with work to do after its COMMIT (an
 * in-memory cache dropping what the write changed). Injectable like any provider: the data
 * source is the process's one, and what runs after the commit is whatever the caller
 * registers, so no module-level state finds a cache from its data source.
 */
@Injectable()
export class Transactions {
  private readonly logger = new Logger(Transactions.name);

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` in a transaction (inside it, use only the given manager) and then the
   * callbacks it registered with `scope.afterCommit`.
   *
   * When the work failed, TypeORM rolled the transaction back: nothing committed, so the
   * callbacks are dropped. When the work finished but COMMIT itself failed, the callbacks
   * still run before the error is rethrown: a COMMIT whose answer was lost (the connection
   * broke) may well have committed, and what the callbacks do is forget what the write may
   * have changed, which costs one reload when nothing did. So this process never serves rows
   * older than a write of its own that committed, whatever answer the write got.
   */
  async run<T>(work: (manager: EntityManager, scope: TransactionScope) => Promise<T>): Promise<T> {
    const callbacks: (() => void)[] = [];
    let open = true;
    const scope: TransactionScope = {
      afterCommit: (callback) => {
        if (!open) throw new Error('afterCommit: register the callback inside the transaction');
        callbacks.push(callback);
      },
    };
    let committing = false;
    try {
      const result = await this.dataSource.transaction(async (manager) => {
        const value = await work(manager, scope);
        committing = true;
        return value;
      });
      open = false;
      this.runAll(callbacks);
      return result;
    } catch (error) {
      open = false;
      if (committing) this.runAll(callbacks);
      throw error;
    }
  }

  private runAll(callbacks: readonly (() => void)[]): void {
    for (const callback of callbacks) {
      try {
        callback();
      } catch (error) {
        // The transaction's outcome stands: a failing callback neither hides it nor stops the next one.
        this.logger.error(`an after-commit callback failed: ${(error as Error).message}`, (error as Error).stack);
      }
    }
  }
}
