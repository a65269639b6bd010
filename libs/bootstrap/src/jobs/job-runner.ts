import type { HasBackgroundJob } from '@broker/domain';
import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type Provider,
  type Type,
} from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';

/** The jobs a server runs (a provider list: the end-user server's `background-jobs.ts`; the admin server runs none). */
export const BACKGROUND_JOBS = Symbol('BACKGROUND_JOBS');

/**
 * Runs a server's background jobs: starts each enabled one once the application has started,
 * logs every failed run the same way (`job` and `err`, whose serializer keeps the error's
 * type, message, code and stack only: never a query's parameters), and stops them all at
 * shutdown, waiting for the runs in progress (before the database closes).
 */
@Injectable()
export class JobRunner implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    @Inject(BACKGROUND_JOBS) private readonly jobs: readonly HasBackgroundJob[],
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('jobs');
  }

  async onApplicationBootstrap(): Promise<void> {
    await Promise.all(
      this.jobs
        .map(({ job }) => job)
        .filter((job) => job.enabled)
        .map((job) => job.start((error) => this.logger.warn({ job: job.name, err: error }, job.definition.failure))),
    );
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.jobs.map(({ job }) => job.stop()));
  }
}

/** A server's providers that run `jobs`: the list under `BACKGROUND_JOBS`, and the runner. */
export function backgroundJobProviders(jobs: readonly Type<HasBackgroundJob>[]): Provider[] {
  return [
    { provide: BACKGROUND_JOBS, useFactory: (...instances: HasBackgroundJob[]) => instances, inject: [...jobs] },
    JobRunner,
  ];
}
