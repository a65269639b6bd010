import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { registerContractServer } from './openapi-contract';

/** The compiled entry points (`npm test` builds first). */
export const ENTRY_POINTS = {
  broker: 'dist/apps/broker/src/main.js',
  'user-api': 'dist/apps/user-api/src/main.js',
  'admin-api': 'dist/apps/admin-api/src/main.js',
} as const;

/** A broker running as its own OS process, as `npm start` runs it. */
export class BrokerProcess {
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private pending = '';

  constructor(entry: keyof typeof ENTRY_POINTS, args: string[]) {
    this.child = spawn(process.execPath, [ENTRY_POINTS[entry], ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.pending += chunk;
      const lines = this.pending.split('\n');
      this.pending = lines.pop() ?? '';
      this.stdout.push(...lines.filter(Boolean));
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.stderr.push(chunk));
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Parsed JSON log records so far. */
  records(): Record<string, unknown>[] {
    return this.stdout.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  /** Waits for a log record matching `predicate` (fails if the process exits first). */
  async waitFor(
    predicate: (record: Record<string, unknown>) => boolean,
    timeoutMs = 60_000,
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => {
      exited = true;
    });
    for (;;) {
      const found = this.records().find(predicate);
      if (found) return found;
      if (exited) throw new Error(`process exited before the expected log line; stderr: ${this.stderr.join('')}`);
      if (Date.now() > deadline) throw new Error('timed out waiting for a log line');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Resolves with the base URLs once both (or the one) servers listen. */
  async listening(kinds: readonly ('enduser' | 'admin')[]): Promise<Record<string, string>> {
    const urls: Record<string, string> = {};
    for (const kind of kinds) {
      const record = await this.waitFor(
        (r) => r.server === kind && typeof r.url === 'string' && String(r.msg).endsWith('server listening'),
      );
      urls[kind] = record.url as string;
      registerContractServer(urls[kind], kind);
    }
    return urls;
  }

  /**
   * The pid of the process that answered `response` (with `server.workers` > 1,
   * one of the workers): found through the access-log line carrying the `traceresponse`'s trace id.
   */
  async answeredBy(response: { readonly headers: Record<string, string | string[] | undefined> }): Promise<number> {
    const traceId = String(response.headers.traceresponse ?? '').split('-')[1];
    if (traceId === undefined) throw new Error('the response carries no traceresponse header');
    const line = await this.waitFor(
      (r) => r.trace_id === traceId && typeof r.status === 'number' && typeof r.pid === 'number',
      10_000,
    );
    return line.pid as number;
  }

  /** The OS process id (for resource measurements). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

/** Writes a YAML config file into a fresh temporary directory; returns its path and directory. */
export function writeConfigFile(config: Record<string, unknown>): { file: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'broker-proc-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, stringify(config));
  return { file, dir };
}
