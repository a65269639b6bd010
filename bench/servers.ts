import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ENTRY_POINTS, freePort, writeConfigFile } from '@broker/testing';

/** A server under measurement, in its own OS process. */
export interface ServerProcess {
  readonly pid: number;
  /** Peak resident set size so far (VmHWM), in MB. */
  peakRssMb(): number;
  stop(): Promise<void>;
}

export interface BrokerServer extends ServerProcess {
  readonly enduserUrl: string;
  readonly adminUrl: string;
  /** The broker's log so far (after stop: all of it, kept in memory; the file is removed). */
  log(): string;
}

function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : Number.NaN;
}

let clockTicks: number | undefined;

/**
 * CPU time (user + system, in clock ticks) of every live process in the tree rooted at
 * `root`, by pid: a server with cluster workers, or PostgreSQL's postmaster and backends.
 * The load generator, the servers and PostgreSQL share two cores, so each run
 * reports who used them. A process that exits between two samples takes its time with it.
 */
export function treeCpuTicks(root: number): Map<number, number> {
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the command name (which may hold spaces): state, ppid, ..., utime (14th), stime (15th).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(entry);
    const parent = Number(fields[1]);
    children.set(parent, [...(children.get(parent) ?? []), pid]);
    ticks.set(pid, Number(fields[11]) + Number(fields[12]));
  }
  const tree = new Map<number, number>();
  const pending = [root];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    if (!ticks.has(pid)) continue;
    tree.set(pid, ticks.get(pid) as number);
    pending.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** CPU seconds a process tree used between two samples of treeCpuTicks (processes born in between counted from 0). */
export function cpuSecondsBetween(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  let total = 0;
  for (const [pid, value] of after) total += value - (before.get(pid) ?? 0);
  return total / clockTicks;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * Starts the compiled broker (both servers) as `npm start` runs it, with `config` merged
 * over fixed loopback ports. Its log (one JSON line per request at level info) goes to a
 * file, as a production deployment would ship it, rather than through a pipe into this
 * process, whose event loop would otherwise parse tens of thousands of lines mid-run.
 */
export interface BrokerLaunch {
  /** The compiled entry point (default: this checkout's `dist`); another build's, to compare with the past. */
  readonly entryPoint?: string;
  /** Node options before the entry point, e.g. `--cpu-prof` to profile a run. */
  readonly nodeArgs?: readonly string[];
}

export async function startBroker(
  config: Record<string, unknown> & { server: { enduser: { port: number } & Record<string, unknown> } },
  launch: BrokerLaunch = {},
): Promise<BrokerServer> {
  const adminPort = await freePort();
  const { file, dir } = writeConfigFile({ ...config, server: { ...config.server, admin: { port: adminPort } } });
  const logFile = join(dir, 'broker.log');
  const log = openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [...(launch.nodeArgs ?? []), launch.entryPoint ?? ENTRY_POINTS.broker, '--config', file],
    { stdio: ['ignore', log, log] },
  );
  closeSync(log);
  const pid = child.pid as number;
  let finalLog: string | undefined;
  const enduserUrl = `http://127.0.0.1:${config.server.enduser.port}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `the broker exited with ${child.exitCode} at startup:\n${readFileSync(logFile, 'utf8').slice(-4000)}`,
      );
    const up = await Promise.all(
      [enduserUrl, adminUrl].map((url) =>
        fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false,
        ),
      ),
    );
    if (up.every(Boolean)) break;
    if (Date.now() > deadline)
      throw new Error(`the broker did not become healthy in 60 s:\n${readFileSync(logFile, 'utf8').slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    pid,
    enduserUrl,
    adminUrl,
    peakRssMb: () => peakRssMb(pid),
    log: () => finalLog ?? readFileSync(logFile, 'utf8'),
    stop: async () => {
      await stopChild(child);
      finalLog ??= readFileSync(logFile, 'utf8');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts a bench/*.mjs server that prints `{"url": ...}` on its first stdout line once
 * listening. `quiet` drops its stderr (oidc-provider's start-up warnings about its
 * development defaults).
 */
export async function startScriptServer(
  script: string,
  args: readonly string[] = [],
  { quiet = false } = {},
): Promise<ServerProcess & { readonly url: string }> {
  const child = spawn(process.execPath, [join('bench', script), ...args], {
    stdio: ['ignore', 'pipe', quiet ? 'ignore' : 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
    child.stdout
      ?.setEncoding('utf8')
      .once('data', (chunk: string) => resolve((JSON.parse(chunk.split('\n')[0] as string) as { url: string }).url));
  });
  // Anything it prints later is drained, never buffered here.
  child.stdout?.resume();
  const pid = child.pid as number;
  return { pid, url, peakRssMb: () => peakRssMb(pid), stop: () => stopChild(child) };
}
