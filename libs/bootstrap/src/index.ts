/**
 * What boots a broker process, above `http` and `persistence` (http no longer
 * opens the database): `startServers` opens the database once and starts every server on
 * one shared `BrokerRuntime`; `runMain` is the process entry point (config errors, exit
 * codes, signals); `CoreModule` gives each server the runtime's providers, the database,
 * request logging and `/health`. Imported by the apps and by libs/testing.
 */
export { CoreModule } from './core.module';
export { runMain } from './launch';
export {
  startServers,
  StartupError,
  type ServerDefinition,
  type StartOptions,
  type RunningBroker,
  type RunningServer,
} from './start-servers';
export type { BrokerRuntime } from './runtime';
export { BACKGROUND_JOBS, backgroundJobProviders, JobRunner } from './jobs/job-runner';
export { HealthService, type HealthReport } from './health/health.service';
