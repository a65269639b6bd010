import { randomBytes } from 'node:crypto';
import { parseConfig, type BrokerConfig } from '@broker/config';
import { inject } from 'vitest';

type Tree = Record<string, unknown>;

/** `override` merged deeply into `base` (objects merged key by key; arrays and values replaced). */
export function mergeConfigTrees(base: Tree, override: Tree): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const existing = out[key];
    out[key] =
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      existing !== null &&
      typeof existing === 'object' &&
      !Array.isArray(existing)
        ? mergeConfigTrees(existing as Tree, value as Tree)
        : value;
  }
  return out;
}

/** How a test wants its fresh database. */
export interface FreshDatabaseOptions {
  /**
   * True for the tests about migrations themselves: a database with nothing applied.
   * Otherwise the database is a copy of one migrated once per run (test/global-setup.ts).
   */
  readonly empty?: boolean;
}

/**
 * The `storage.pglite` settings of a fresh PGlite database in `dataDir` (in memory by
 * default): seeded (`initial_data`) from the run's migrated dump unless `empty`.
 */
export function pgliteStorage(
  dataDir = `memory://${randomBytes(6).toString('hex')}`,
  options: FreshDatabaseOptions = {},
): Tree {
  // An explicit `undefined` when empty: merged over `testConfigTree`'s base, it removes the seed.
  return { data_dir: dataDir, initial_data: options.empty ? undefined : inject('pgliteDump') || undefined };
}

/** Random 32-byte keys in the config's base64 form. */
export function testKey(): string {
  return randomBytes(32).toString('base64');
}

/**
 * A valid raw config tree for tests: ephemeral ports, a fresh in-memory PGlite (every
 * migration applied: seeded from the run's dump; a `data_dir` override is seeded too),
 * explicit keys (never development keys), quiet logging, no background refresh sweep;
 * `overrides` merged deeply.
 */
export function testConfigTree(overrides: Tree = {}): Tree {
  const base: Tree = {
    server: {
      enduser: { port: 0, bind: '127.0.0.1' },
      admin: { port: 0, bind: '127.0.0.1' },
      shutdown: { timeout: '5s' },
    },
    storage: { backend: 'pglite', pglite: pgliteStorage() },
    encryption: { keys: [{ id: 'test-kek-1', key: testKey() }], current_key_id: 'test-kek-1' },
    third_party_oauth2: { jwe_keys: [{ id: 'test-jwe-1', key: testKey() }] },
    log: { level: 'info' },
    // The background refresh sweep (on by default) is enabled by the tests about it: elsewhere a test that expires a
    // session counts the exchange's own refresh.
    token_refresh: { proactive: { enabled: false } },
  };
  return mergeConfigTrees(base, overrides);
}

export function testConfig(overrides: Tree = {}): BrokerConfig {
  return parseConfig(testConfigTree(overrides), {}).config;
}
