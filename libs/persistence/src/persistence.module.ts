import { Global, Module, type DynamicModule } from '@nestjs/common';
import { Database } from './database';

/**
 * Provides the process's `Database` to one Nest application. The database is opened
 * by the launcher (once per process, shared by both servers) and handed in here.
 */
@Global()
@Module({})
export class PersistenceModule {
  static forDatabase(database: Database): DynamicModule {
    return { module: PersistenceModule, providers: [{ provide: Database, useValue: database }], exports: [Database] };
  }
}
