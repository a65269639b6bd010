import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LOCK = join(tmpdir(), 'agent-identity-broker-bench.lock');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Takes the machine for one benchmark file. vitest runs the `measure` files in parallel
 * forks (maxWorkers 2), and two benchmarks loading the same two cores would both measure
 * nonsense; so each file holds this lock (an atomic mkdir) from setup to teardown. A lock
 * left by a process that died is taken over. Returns the release function.
 */
export async function takeMachine(): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = Number.NaN;
    try {
      holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    } catch {
      // being created or removed right now: look again shortly
    }
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) rmSync(LOCK, { recursive: true, force: true });
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
