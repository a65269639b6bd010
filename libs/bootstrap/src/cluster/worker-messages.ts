/**
 * What a worker tells the primary over the cluster's IPC channel about
 * its start-up. The primary waits for every worker of the first generation to be ready;
 * a worker that cannot start says why, so the primary prints the reason once and exits
 * with the worker's code instead of restarting it in a loop.
 */
export type WorkerMessage =
  | { readonly type: 'broker:worker-ready' }
  | { readonly type: 'broker:worker-failed'; readonly message: string; readonly exitCode: number };

/** Narrows an IPC message to ours (other messages, e.g. prom-client's, share the channel). */
export function isWorkerMessage(message: unknown): message is WorkerMessage {
  const type = (message as { type?: unknown } | null)?.type;
  return type === 'broker:worker-ready' || type === 'broker:worker-failed';
}
