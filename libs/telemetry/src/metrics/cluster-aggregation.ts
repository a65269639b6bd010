import type { Cluster } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, Registry } from 'prom-client';

/**
 * Issue 16 item 3: `/metrics` with `server.workers` > 1. A scrape lands on one worker, but
 * Prometheus must see the whole broker: that worker asks the primary over the cluster's IPC
 * channel, the primary collects every worker's registry with prom-client's
 * `AggregatorRegistry.clusterMetrics()` (counters and histograms summed, process metrics
 * aggregated as prom-client defines) and answers with the exposition text. Nothing here
 * runs, and `node:cluster` is not even loaded, in a single-process broker.
 */
const SCRAPE_REQUEST = 'broker:metrics-request';
const SCRAPE_RESPONSE = 'broker:metrics-response';

/** How long a worker waits for the primary's answer (prom-client gives up on a silent worker after 5 s). */
const SCRAPE_TIMEOUT_MS = 10_000;

interface ScrapeRequest {
  readonly type: typeof SCRAPE_REQUEST;
  readonly id: string;
}

interface ScrapeResponse {
  readonly type: typeof SCRAPE_RESPONSE;
  readonly id: string;
  readonly body?: string;
  readonly error?: string;
}

function isMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return (message as { type?: unknown } | null)?.type === type;
}

/** The content type of the aggregated exposition (prom-client's text format). */
export const CLUSTER_METRICS_CONTENT_TYPE: string = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * Worker side, once at boot: answer the primary's collection requests with this process's
 * registry (prom-client answers with its global registry otherwise). Constructing an
 * `AggregatorRegistry` installs prom-client's worker listener (idempotent).
 */
export function joinClusterMetrics(registry: Registry): void {
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry();
  joined = true;
}

let joined = false;

/** Whether this process is a cluster worker whose scrape must answer for all workers (`joinClusterMetrics` was called). */
export function inClusterWorker(): boolean {
  return joined;
}

const pending = new Map<string, { resolve: (body: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
let listening = false;

/** Worker side: the exposition of every worker, aggregated by the primary. */
export function scrapeCluster(): Promise<string> {
  if (!listening) {
    listening = true;
    process.on('message', (message: unknown) => {
      if (!isMessage<ScrapeResponse>(message, SCRAPE_RESPONSE)) return;
      const request = pending.get(message.id);
      if (request === undefined) return;
      pending.delete(message.id);
      clearTimeout(request.timer);
      if (message.body !== undefined) request.resolve(message.body);
      else request.reject(new Error(`cluster metrics aggregation failed: ${message.error ?? 'no answer'}`));
    });
  }
  return new Promise((resolve, reject) => {
    if (process.send === undefined || !process.connected) {
      reject(new Error('cluster metrics aggregation failed: no channel to the primary process'));
      return;
    }
    const id = randomUUID();
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error('cluster metrics aggregation failed: the primary process did not answer in time'));
    }, SCRAPE_TIMEOUT_MS);
    pending.set(id, { resolve, reject, timer });
    const request: ScrapeRequest = { type: SCRAPE_REQUEST, id };
    process.send(request);
  });
}

/**
 * Primary side, once at start (the primary passes its `node:cluster`): answer every
 * worker's scrape request with the aggregation of all workers' registries.
 */
export function serveClusterMetrics(cluster: Cluster): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage<ScrapeRequest>(message, SCRAPE_REQUEST)) return;
    const answer = (response: ScrapeResponse): void => {
      if (worker.isConnected()) worker.send(response);
    };
    aggregator.clusterMetrics().then(
      (body) => answer({ type: SCRAPE_RESPONSE, id: message.id, body }),
      (error: unknown) => answer({ type: SCRAPE_RESPONSE, id: message.id, error: (error as Error).message }),
    );
  });
}
