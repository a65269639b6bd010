import type { Cluster, Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, Registry } from 'prom-client';

/**
 * `/metrics` with `server.workers` > 1. A scrape lands on one worker, but
 * Prometheus must see the whole broker: that worker asks the primary over the cluster's IPC
 * channel, the primary collects every ready worker's registry (`getMetricsAsJSON`) and merges
 * them with prom-client's `AggregatorRegistry.aggregate` (counters and histograms summed,
 * each family's `aggregator` otherwise), and answers with the exposition text.
 *
 * The collection is ours rather than `AggregatorRegistry.clusterMetrics()`: prom-client's
 * primary-side listener throws on an answer that arrives after its 5 s timeout
 * (prometheus/client_js#199: "Cannot read property 'responses' of undefined"), which would
 * crash the primary and with it every worker, and it asks workers that are still starting
 * (client_js#181). Here late answers are ignored and only ready workers are asked.
 * Nothing here runs, and `node:cluster` is not even loaded, in a single-process broker.
 */
const SCRAPE_REQUEST = 'broker:metrics-scrape-request';
const SCRAPE_RESPONSE = 'broker:metrics-scrape-response';
const COLLECT_REQUEST = 'broker:metrics-collect-request';
const COLLECT_RESPONSE = 'broker:metrics-collect-response';

/** How long the primary waits for every worker's registry. */
const COLLECT_TIMEOUT_MS = 5_000;
/** How long a worker waits for the primary's aggregation (its collection timeout and a margin). */
const SCRAPE_TIMEOUT_MS = 8_000;

type WorkerMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

interface Request {
  readonly type: typeof SCRAPE_REQUEST | typeof COLLECT_REQUEST;
  readonly id: string;
}

interface ScrapeResponse {
  readonly type: typeof SCRAPE_RESPONSE;
  readonly id: string;
  readonly body?: string;
  readonly error?: string;
}

interface CollectResponse {
  readonly type: typeof COLLECT_RESPONSE;
  readonly id: string;
  readonly metrics?: WorkerMetrics;
  readonly error?: string;
}

function isMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return (message as { type?: unknown } | null)?.type === type;
}

/** The content type of the aggregated exposition (prom-client's text format). */
export const CLUSTER_METRICS_CONTENT_TYPE: string = Registry.PROMETHEUS_CONTENT_TYPE;

/** Answers that have not arrived yet, by request id; a late answer finds nothing and is dropped. */
class PendingAnswers<T> {
  private readonly pending = new Map<
    string,
    { resolve: (value: T) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }
  >();

  open(timeoutMs: number, timeoutMessage: string): { id: string; answer: Promise<T> } {
    const id = randomUUID();
    const answer = new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(timeoutMessage));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
    });
    return { id, answer };
  }

  settle(id: string, outcome: { value: T } | { error: string }): void {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    this.pending.delete(id);
    clearTimeout(entry.timer);
    if ('value' in outcome) entry.resolve(outcome.value);
    else entry.reject(new Error(outcome.error));
  }
}

let joined = false;
const scrapes = new PendingAnswers<string>();

/**
 * Worker side, once at boot, before the worker tells the primary it is ready: answer the
 * primary's collections with this process's registry, and route `scrape()` through the primary.
 */
export function joinClusterMetrics(registry: Registry): void {
  if (joined) return;
  joined = true;
  process.on('message', (message: unknown) => {
    if (isMessage<ScrapeResponse>(message, SCRAPE_RESPONSE)) {
      scrapes.settle(
        message.id,
        message.body !== undefined
          ? { value: message.body }
          : { error: `cluster metrics aggregation failed: ${message.error ?? 'no answer'}` },
      );
      return;
    }
    if (!isMessage<Request>(message, COLLECT_REQUEST)) return;
    const answer = (response: CollectResponse): void => {
      if (process.send !== undefined && process.connected) process.send(response);
    };
    registry.getMetricsAsJSON().then(
      (metrics) => answer({ type: COLLECT_RESPONSE, id: message.id, metrics }),
      (error: unknown) => answer({ type: COLLECT_RESPONSE, id: message.id, error: (error as Error).message }),
    );
  });
}

/** Whether this process is a cluster worker whose scrape must answer for all workers (`joinClusterMetrics` was called). */
export function inClusterWorker(): boolean {
  return joined;
}

/** Worker side: the exposition of every worker, aggregated by the primary. */
export function scrapeCluster(): Promise<string> {
  if (process.send === undefined || !process.connected)
    return Promise.reject(new Error('cluster metrics aggregation failed: no channel to the primary process'));
  const { id, answer } = scrapes.open(
    SCRAPE_TIMEOUT_MS,
    'cluster metrics aggregation failed: the primary process did not answer in time',
  );
  const request: Request = { type: SCRAPE_REQUEST, id };
  process.send(request);
  return answer;
}

/**
 * Primary side, once at start (the primary passes its `node:cluster` and which workers are
 * ready, i.e. have joined): answer every worker's scrape request with the aggregation of all
 * ready workers' registries. A worker that does not answer in time fails that scrape (a
 * partial sum would show Prometheus a counter going down); late answers are dropped.
 */
export function serveClusterMetrics(cluster: Cluster, readyWorkers: () => readonly Worker[]): void {
  const collections = new PendingAnswers<WorkerMetrics>();

  const collectAll = async (): Promise<string> => {
    const workers = readyWorkers().filter((worker) => worker.isConnected());
    const answers = workers.map((worker) => {
      const { id, answer } = collections.open(
        COLLECT_TIMEOUT_MS,
        `worker ${worker.id} did not send its metrics in time`,
      );
      const request: Request = { type: COLLECT_REQUEST, id };
      worker.send(request);
      return answer;
    });
    return AggregatorRegistry.aggregate(await Promise.all(answers)).metrics();
  };

  cluster.on('message', (worker, message: unknown) => {
    if (isMessage<CollectResponse>(message, COLLECT_RESPONSE)) {
      collections.settle(
        message.id,
        message.metrics !== undefined ? { value: message.metrics } : { error: message.error ?? 'no metrics' },
      );
      return;
    }
    if (!isMessage<Request>(message, SCRAPE_REQUEST)) return;
    const answer = (response: ScrapeResponse): void => {
      if (worker.isConnected()) worker.send(response);
    };
    collectAll().then(
      (body) => answer({ type: SCRAPE_RESPONSE, id: message.id, body }),
      (error: unknown) => answer({ type: SCRAPE_RESPONSE, id: message.id, error: (error as Error).message }),
    );
  });
}
