import type { Logger as PinoLogger } from 'pino';
import type { Logger as TypeOrmLogger } from 'typeorm';
import { countQuery } from './query-count';

/**
 * Routes TypeORM's own messages to the broker's logger. Query text and parameters are
 * never logged: parameters can hold ciphertexts, hashes and other sensitive values.
 * `logQuery` (which TypeORM's postgres query runner calls for every statement, on PGlite
 * too, whatever the `logging` option) counts the statement for the current request.
 */
export class TypeOrmPinoLogger implements TypeOrmLogger {
  constructor(private readonly logger: PinoLogger) {}

  logQuery(): void {
    countQuery();
  }

  logQueryError(error: string | Error): void {
    const message = typeof error === 'string' ? error : error.message;
    this.logger.debug({ component: 'database' }, `query failed: ${message}`);
  }

  logQuerySlow(time: number): void {
    this.logger.warn({ component: 'database', duration_ms: time }, 'slow query');
  }

  logSchemaBuild(message: string): void {
    this.logger.debug({ component: 'database' }, message);
  }

  logMigration(message: string): void {
    this.logger.info({ component: 'migrations' }, message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    const text = typeof message === 'string' ? message : 'database message';
    if (level === 'warn') this.logger.warn({ component: 'database' }, text);
    else this.logger.debug({ component: 'database' }, text);
  }
}
