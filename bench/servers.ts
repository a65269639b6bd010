import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
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
}

function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : Number.NaN;
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
export async function startBroker(config: Record<string, unknown> & { server: { enduser: { port: number } & Record<string, unknown> } }): Promise<BrokerServer> {
  const adminPort = await freePort();
  const { file, dir } = writeConfigFile({ ...config, server: { ...config.server, admin: { port: adminPort } } });
  const logFile = join(dir, 'broker.log');
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, [ENTRY_POINTS.broker, '--config', file], { stdio: ['ignore', log, log] });
  closeSync(log);
  const pid = child.pid as number;
  const enduserUrl = `http://127.0.0.1:${config.server.enduser.port}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the broker exited with ${child.exitCode} at startup:\n${readFileSync(logFile, 'utf8').slice(-4000)}`);
    const up = await Promise.all([enduserUrl, adminUrl].map((url) => fetch(`${url}/health`).then((r) => r.ok, () => false)));
    if (up.every(Boolean)) break;
    if (Date.now() > deadline) throw new Error(`the broker did not become healthy in 60 s:\n${readFileSync(logFile, 'utf8').slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    pid,
    enduserUrl,
    adminUrl,
    peakRssMb: () => peakRssMb(pid),
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts a bench/*.mjs server that prints `{"url": ...}` on its first stdout line once
 * listening. `quiet` drops its stderr (oidc-provider's start-up warnings about its
 * development defaults).
 */
export async function startScriptServer(script: string, args: readonly string[] = [], { quiet = false } = {}): Promise<ServerProcess & { readonly url: string }> {
  const child = spawn(process.execPath, [join('bench', script), ...args], { stdio: ['ignore', 'pipe', quiet ? 'ignore' : 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
    child.stdout?.setEncoding('utf8').once('data', (chunk: string) => resolve((JSON.parse(chunk.split('\n')[0] as string) as { url: string }).url));
  });
  // Anything it prints later is drained, never buffered here.
  child.stdout?.resume();
  const pid = child.pid as number;
  return { pid, url, peakRssMb: () => peakRssMb(pid), stop: () => stopChild(child) };
}
