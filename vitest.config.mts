import { resolve } from 'node:path';
import ts from 'typescript';
import { defineConfig } from 'vitest/config';

/**
 * Nest's dependency injection and DTO validation read `design:*` decorator metadata,
 * which Vite's own TypeScript transform does not emit. Tests are therefore compiled by
 * the TypeScript compiler itself, exactly as the build does.
 */
function typescriptWithDecoratorMetadata() {
  return {
    name: 'broker:typescript-decorator-metadata',
    enforce: 'pre' as const,
    transform(code: string, id: string) {
      if (!id.endsWith('.ts') || id.includes('/node_modules/')) return null;
      const output = ts.transpileModule(code, {
        fileName: id,
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          esModuleInterop: true,
          sourceMap: true,
          inlineSources: true,
        },
      });
      return { code: output.outputText, map: output.sourceMapText };
    },
  };
}

/** End-to-end files that run in a worker of their own (see the `tests-alone` project). */
const ALONE = [
  'test/token-exchange/trust-anchor.e2e-spec.ts',
  'test/token-exchange/exchange-cache-replicas.e2e-spec.ts',
  'test/oauth2/client-cache-replicas.e2e-spec.ts',
  'test/oauth2/token-introspection-replicas.e2e-spec.ts',
  'test/authorization-requests/authorization-requests-replicas.e2e-spec.ts',
  'test/admin/admin-agent-suspension-replicas.e2e-spec.ts',
];

// vitest runs from the repository root.
const lib = (name: string): string => resolve(`libs/${name}/src`);

export default defineConfig({
  plugins: [typescriptWithDecoratorMetadata()],
  oxc: false,
  resolve: {
    alias: {
      '@broker/config': lib('config'),
      '@broker/domain': lib('domain'),
      '@broker/outbound': lib('outbound'),
      '@broker/telemetry': lib('telemetry'),
      '@broker/events': lib('events'),
      '@broker/webhooks': lib('webhooks'),
      '@broker/persistence': lib('persistence'),
      '@broker/auth': lib('auth'),
      '@broker/http': lib('http'),
      '@broker/bootstrap': lib('bootstrap'),
      '@broker/audit': lib('audit'),
      '@broker/vault': lib('vault'),
      '@broker/oauth-server': lib('oauth-server'),
      '@broker/approvals': lib('approvals'),
      '@broker/testing': lib('testing'),
      '@broker/api-shapes': lib('api-shapes'),
    },
  },
  test: {
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        // `npm test`, part 1: the unit specs next to the code. They share their worker's module
        // graph (no per-file isolation): each file would otherwise import TypeORM, Nest and
        // the libs again, which costs more than the specs themselves (measured: 181 s -> 78 s
        // for the 76 files). They start no server and change no global state they do not restore.
        extends: true,
        test: {
          name: 'unit',
          include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts'],
          globalSetup: ['test/global-setup.ts'],
          setupFiles: ['test/contract-setup.ts'],
          isolate: false,
        },
      },
      {
        // `npm test`, part 2: the end-to-end tests. Like the unit specs they share their worker's
        // module graph (measured: importing Nest, TypeORM and the libs again for every file took
        // 254 s of worker time, 74 s shared; the whole run went from about 1,000 s to 870 s). What a module keeps for the process is reset
        // before each file by test/contract-setup.ts (the logger used outside a request, the broker
        // origins the contract check knows); the files below stay alone in a fresh worker.
        extends: true,
        test: {
          name: 'tests',
          include: ['test/**/*.e2e-spec.ts'],
          exclude: ALONE,
          globalSetup: ['test/global-setup.ts'],
          setupFiles: ['test/contract-setup.ts'],
          isolate: false,
        },
      },
      {
        // `npm test`, part 3: end-to-end files that run in a fresh worker each. These measure
        // cross-replica cache invalidation and key-set refetch limits, and failed in some
        // orders when they shared a worker with other files (pooled connections or timers of an
        // earlier file's brokers on reused loopback ports are the suspects).
        extends: true,
        test: {
          name: 'tests-alone',
          include: ALONE,
          globalSetup: ['test/global-setup.ts'],
          setupFiles: ['test/contract-setup.ts'],
        },
      },
      {
        // `npm run bench`: measurements that need the TypeScript test helpers. They print
        // numbers and assert nothing; `npm test` does not run them.
        extends: true,
        test: { name: 'measure', include: ['bench/**/*.measure.ts'], testTimeout: 300_000 },
      },
      {
        // `npm run bench -- --against <git ref>` (bench/bench.mjs): this build against another commit's.
        extends: true,
        test: { name: 'against', include: ['bench/**/*.against.ts'], testTimeout: 1_800_000 },
      },
    ],
  },
});
