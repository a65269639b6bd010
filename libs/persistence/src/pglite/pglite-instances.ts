import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite, types } from '@electric-sql/pglite';
import { ExclusiveLock } from './exclusive-lock';

/** One PGlite instance and the lock that makes its single connection exclusive. */
export interface SharedPglite {
  readonly key: string;
  readonly db: PGlite;
  readonly lock: ExclusiveLock;
}

interface Entry {
  shared: Promise<SharedPglite>;
  refs: number;
}

const MEMORY = 'memory://';
const instances = new Map<string, Entry>();
let memoryTemplate: Promise<PGlite> | undefined;

/**
 * node-postgres returns int8 as a string and bytea as a Buffer; PGlite's defaults
 * differ. Parsing the same way keeps the two backends interchangeable.
 */
const PARSERS = {
  [types.INT8]: (value: string) => value,
  [types.BYTEA]: (value: string) => Buffer.from(value.startsWith('\\x') ? value.slice(2) : value, 'hex'),
};

function isMemory(dataDir: string): boolean {
  return dataDir.startsWith(MEMORY);
}

async function create(dataDir: string): Promise<PGlite> {
  if (isMemory(dataDir)) {
    // An in-memory database is a clone of a per-process pristine template: initdb runs
    // once per process (seconds) and each further database costs a copy (sub-second).
    memoryTemplate ??= PGlite.create(MEMORY, { parsers: PARSERS });
    const clone = await (await memoryTemplate).clone();
    return PGlite.create({ loadDataDir: await clone.dumpDataDir('none'), parsers: PARSERS }).finally(() => clone.close());
  }
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return PGlite.create(dir, { parsers: PARSERS });
}

/**
 * Returns the process's PGlite instance for `dataDir`, opening it on first use: one
 * instance per data directory per process, shared by both servers. Each `acquire`
 * must be paired with `release`; the last release closes the instance.
 * `memory://<name>` names a separate in-memory database.
 */
export function acquirePglite(dataDir: string): Promise<SharedPglite> {
  const key = isMemory(dataDir) ? dataDir : resolve(dataDir);
  let entry = instances.get(key);
  if (entry === undefined) {
    const shared = create(dataDir).then((db) => ({ key, db, lock: new ExclusiveLock() }));
    entry = { shared, refs: 0 };
    instances.set(key, entry);
    shared.catch(() => instances.delete(key));
  }
  entry.refs += 1;
  return entry.shared;
}

export async function releasePglite(shared: SharedPglite): Promise<void> {
  const entry = instances.get(shared.key);
  if (entry === undefined) return;
  entry.refs -= 1;
  if (entry.refs > 0) return;
  instances.delete(shared.key);
  // Wait for whoever holds the connection to finish before closing.
  const release = await shared.lock.acquire(0);
  try {
    await shared.db.close();
  } finally {
    release();
  }
}
