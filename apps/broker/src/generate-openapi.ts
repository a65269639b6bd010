import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { parseConfig } from '@broker/config';
import { CryptoRandom, SystemClock } from '@broker/domain';
import type { BrokerRuntime } from '@broker/bootstrap';
import { buildOpenApiDocument, createLogger, Lifecycle } from '@broker/http';
import { Database } from '@broker/persistence';
import { createTelemetry } from '@broker/telemetry';
import { NestFactory } from '@nestjs/core';
import { ADMIN_API } from '../../admin-api/src/admin-api.server';
import { USER_API } from '../../user-api/src/user-api.server';

/**
 * `npm run build` step: writes openapi/user-api.json and openapi/admin-api.json from
 * the controllers and DTOs (both contracts are generated from
 * machine-readable descriptions). Runs the real modules on a throwaway in-memory
 * database with throwaway keys; nothing listens.
 */
async function main(): Promise<void> {
  const key = (): string => randomBytes(32).toString('base64');
  const { config } = parseConfig(
    {
      storage: { pglite: { data_dir: 'memory://openapi' } },
      encryption: { keys: [{ id: 'openapi', key: key() }] },
      third_party_oauth2: { jwe_keys: [{ id: 'openapi', key: key() }] },
      log: { level: 'warn' },
    },
    {},
  );
  const logger = createLogger(config);
  const database = await Database.open(config, logger);
  const clock = new SystemClock();
  const runtime: BrokerRuntime = {
    config,
    logger,
    database,
    clock,
    random: new CryptoRandom(),
    lifecycle: new Lifecycle(clock),
    telemetry: await createTelemetry(config),
  };
  mkdirSync('openapi', { recursive: true });
  try {
    for (const [definition, file] of [
      [USER_API, 'openapi/user-api.json'],
      [ADMIN_API, 'openapi/admin-api.json'],
    ] as const) {
      const app = await NestFactory.create(definition.module(runtime), { logger: false, abortOnError: false });
      const document = buildOpenApiDocument(
        app,
        definition.kind,
        config.server[definition.kind].authentication.preauth.principal_header_name,
      );
      // Written whole, then renamed over the old file: a reader (the lint, running beside the build in CI) sees
      // the old document or the new one, never a part.
      writeFileSync(`${file}.partial`, `${JSON.stringify(document, null, 2)}\n`);
      renameSync(`${file}.partial`, file);
      await app.close();
    }
  } finally {
    await database.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`openapi generation failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
