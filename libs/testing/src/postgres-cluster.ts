import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway PostgreSQL cluster on loopback, for the database tests. */
export interface PostgresCluster {
  readonly url: string;
  readonly version: string;
  stop(): void;
}

function findBinary(name: string): string | undefined {
  const onPath = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim()) return onPath.stdout.trim();
  // Debian installs the server binaries outside PATH.
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const candidate = join(root, version, 'bin', name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a cluster with `initdb`/`pg_ctl` in a temporary directory on a free loopback
 * port (as the `postgres` OS user when running as root: PostgreSQL refuses root).
 * Returns undefined when the binaries are not installed.
 */
export async function startPostgresCluster(): Promise<PostgresCluster | undefined> {
  const initdb = findBinary('initdb');
  const pgCtl = findBinary('pg_ctl');
  if (initdb === undefined || pgCtl === undefined) return undefined;
  const asRoot = process.getuid?.() === 0;
  const run = (command: string, args: string[]): string =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { encoding: 'utf8', stdio: 'pipe' })
      : execFileSync(command, args, { encoding: 'utf8', stdio: 'pipe' });

  const dir = mkdtempSync(join(tmpdir(), 'broker-pg-'));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const port = await freePort();
  run(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync']);
  run(pgCtl, [
    '-D',
    data,
    '-l',
    join(dir, 'server.log'),
    '-w',
    '-t',
    '60',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`,
    'start',
  ]);
  const version = run(join(pgCtl, '..', 'postgres'), ['--version']).trim();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    version,
    stop() {
      try {
        run(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
