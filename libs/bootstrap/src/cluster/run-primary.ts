import cluster, { type Worker } from 'node:cluster';
import type { BrokerConfig } from '@broker/config';
import { createLogger } from '@broker/http';
import { serveClusterMetrics } from '@broker/telemetry';
import type { Logger } from 'pino';
import { RestartBackoff } from './restart-backoff';
import { isWorkerMessage } from './worker-messages';

/** Beyond `server.shutdown.timeout`, what a worker gets to close its servers and database before it is killed. */
const SHUTDOWN_MARGIN_MS = 5_000;

/** One of the N places a worker runs in; its back-off survives the workers that fill it. */
interface Slot {
  readonly index: number;
  readonly backoff: RestartBackoff;
  worker?: Worker;
  readyAt?: number;
  restart?: NodeJS.Timeout;
}

/**
 * The primary of `server.workers` > 1. It opens no database and listens on
 * nothing itself; it forks the workers (the same entry point), which share both ports
 * through it, and supervises them:
 * - the first start of every worker must succeed: a failure (port in use, database down)
 *   is printed once and the primary exits with the worker's code, instead of looping;
 * - afterwards a worker that dies is replaced after a back-off (`RestartBackoff`), with
 *   one warn line per death;
 * - SIGTERM/SIGINT is forwarded to every worker, each drains within
 *   `server.shutdown.timeout`; exit 0 when all have stopped cleanly, stragglers are killed
 *   after the timeout plus a margin (exit 1); a second signal kills them and exits at once.
 */
export function runPrimary(config: BrokerConfig): void {
  const logger: Logger = createLogger(config).child({ pid: process.pid, role: 'primary' });
  const slots: Slot[] = Array.from({ length: config.server.workers }, (_, index) => ({
    index,
    backoff: new RestartBackoff(),
  }));
  const slotOf = new Map<number, Slot>();
  const failures = new Map<number, { message: string; exitCode: number }>();
  let started = false;
  let stopping: { exitCode: number } | undefined;
  let signals = 0;

  // Only workers that said they are ready have joined the metrics collection.
  serveClusterMetrics(cluster, () =>
    slots.flatMap((slot) => (slot.worker !== undefined && slot.readyAt !== undefined ? [slot.worker] : [])),
  );

  const fork = (slot: Slot): void => {
    slot.restart = undefined;
    slot.readyAt = undefined;
    const worker = cluster.fork();
    slot.worker = worker;
    slotOf.set(worker.id, slot);
  };
  const live = (): Worker[] => slots.flatMap((slot) => (slot.worker === undefined ? [] : [slot.worker]));
  const exitWhenAllStopped = (): void => {
    if (stopping !== undefined && live().length === 0) process.exit(stopping.exitCode);
  };

  /** Stops every worker (SIGTERM, each drains), then exits with `exitCode`; stragglers are killed after the timeout. */
  const stopAll = (exitCode: number): void => {
    stopping = { exitCode };
    for (const slot of slots) clearTimeout(slot.restart);
    for (const worker of live()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      const stragglers = live();
      logger.warn(
        { workers: stragglers.map((w) => w.process.pid) },
        'workers did not stop within the shutdown timeout: killing them',
      );
      stopping = { exitCode: 1 };
      for (const worker of stragglers) worker.process.kill('SIGKILL');
      // Exits once they are reaped (the exit handler); this is the backstop.
      setTimeout(() => process.exit(1), SHUTDOWN_MARGIN_MS).unref();
    }, config.server.shutdown.timeout + SHUTDOWN_MARGIN_MS).unref();
    exitWhenAllStopped();
  };

  cluster.on('message', (worker, message: unknown) => {
    if (!isWorkerMessage(message)) return;
    const slot = slotOf.get(worker.id);
    if (message.type === 'broker:worker-failed') {
      failures.set(worker.id, { message: message.message, exitCode: message.exitCode });
      return;
    }
    if (slot !== undefined) slot.readyAt = Date.now();
    logger.info({ worker: worker.id, worker_pid: worker.process.pid }, 'worker ready');
    if (!started && slots.every((s) => s.readyAt !== undefined)) {
      started = true;
      logger.info({ workers: slots.length }, 'all workers started');
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const slot = slotOf.get(worker.id);
    slotOf.delete(worker.id);
    if (slot === undefined) return;
    slot.worker = undefined;
    const failure = failures.get(worker.id);
    failures.delete(worker.id);
    const died = { worker: worker.id, worker_pid: worker.process.pid, exit_code: code, signal };
    if (stopping !== undefined) {
      // Stopping: a worker is done when it drained (exit 0) or was stopped before it could handle the signal.
      if (code !== 0 && signal !== 'SIGTERM' && stopping.exitCode === 0) stopping = { exitCode: 1 };
      exitWhenAllStopped();
      return;
    }
    if (!started) {
      // The very first start failed: restarting would fail the same way; say why once and stop.
      logger.error({ ...died, reason: failure?.message }, 'a worker failed to start: stopping');
      process.stderr.write(
        `${failure?.message ?? `a worker process exited during start-up (exit code ${String(code)}, signal ${String(signal)})`}\n`,
      );
      stopAll(failure?.exitCode ?? 1);
      return;
    }
    const uptime = slot.readyAt === undefined ? 0 : Date.now() - slot.readyAt;
    const delay = slot.backoff.delayAfter(uptime);
    logger.warn(
      { ...died, reason: failure?.message, uptime_ms: uptime, restart_in_ms: delay },
      'worker exited unexpectedly: restarting it',
    );
    slot.restart = setTimeout(() => fork(slot), delay);
  });

  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    // Already stopping (a signal before, or a failed first start): this one exits at once.
    if (signals > 1 || stopping !== undefined) {
      logger.warn({ signal }, 'second signal: exiting immediately');
      for (const worker of live()) worker.process.kill('SIGKILL');
      process.exit(1);
    }
    logger.info({ signal, workers: live().length }, 'signal received: stopping the workers');
    stopAll(0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  logger.info({ workers: slots.length }, 'starting worker processes');
  for (const slot of slots) fork(slot);
}
