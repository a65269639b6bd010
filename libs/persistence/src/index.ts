/**
 * Persistence: TypeORM entities, migrations, the data source (PGlite or PostgreSQL)
 * and repository classes. No TypeORM type leaves this lib except through `Database`.
 */
export { Database, type StorageBackend } from './database';
export { PersistenceModule } from './persistence.module';
export type { Installation } from './installation/installation.repository';
