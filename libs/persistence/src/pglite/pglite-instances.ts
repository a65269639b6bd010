import { existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
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
/** A freshly initialised data directory, dumped once per process. */
let pristine: Promise<Blob> | undefined;
/** `storage.pglite.initial_data` files, read once per process. */
const initialDumps = new Map<string, Promise<Blob>>();

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

function pristineDump(): Promise<Blob> {
  pristine ??= PGlite.create(MEMORY).then(async (db) => {
    try {
      return await db.dumpDataDir('none');
    } finally {
      await db.close();
    }
  });
  return pristine;
}

function initialDump(file: string): Promise<Blob> {
  const path = resolve(file);
  let dump = initialDumps.get(path);
  if (dump === undefined) {
    dump = readFile(path).then((bytes) => new Blob([bytes]));
    initialDumps.set(path, dump);
    dump.catch(() => initialDumps.delete(path));
  }
  return dump;
}

/**
 * Opens the instance. A new database (in memory, or a data directory holding none yet)
 * starts from `initialData` (a PGlite data directory dump) when given; an in-memory one
 * otherwise starts from a pristine data directory initialised once per process (initdb
 * costs seconds, loading a dump a fraction of that).
 */
async function create(dataDir: string, initialData: string | undefined): Promise<PGlite> {
  if (isMemory(dataDir)) {
    const loadDataDir = await (initialData === undefined ? pristineDump() : initialDump(initialData));
    return PGlite.create({ loadDataDir, parsers: PARSERS });
  }
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const loadDataDir =
    initialData !== undefined && !existsSync(join(dir, 'PG_VERSION')) ? await initialDump(initialData) : undefined;
  return PGlite.create(dir, { parsers: PARSERS, ...(loadDataDir === undefined ? {} : { loadDataDir }) });
}

/**
 * Returns the process's PGlite instance for `dataDir`, opening it on first use: one
 * instance per data directory per process, shared by both servers. Each `acquire`
 * must be paired with `release`; the last release closes the instance.
 * `memory://<name>` names a separate in-memory database. `initialData` (the path of a
 * PGlite data directory dump) seeds a database that does not exist yet, and is ignored
 * when the instance is already open or the directory already holds a database.
 */
export function acquirePglite(dataDir: string, initialData?: string): Promise<SharedPglite> {
  const key = isMemory(dataDir) ? dataDir : resolve(dataDir);
  let entry = instances.get(key);
  if (entry === undefined) {
    const shared = create(dataDir, initialData).then((db) => ({ key, db, lock: new ExclusiveLock() }));
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
