// One autocannon load, run in a worker thread (started by bench/load.ts) so that the
// load generator has its own event loop and heap, apart from the code that seeds the
// database and signs tokens. Everything it sends is prepared before it starts: request
// bodies arrive ready-made, so the generator only writes buffers and parses responses
// (the machine has two cores shared by load generator, server and PostgreSQL).
//
// workerData: { url, method, headers, bodies, headersPerRequest, cycle, connections, warmupSeconds, durationSeconds,
//   expectedStatus }
//   bodies: undefined (no body), [one body] (the same for every request) or many bodies
//   handed out in order. headersPerRequest: undefined, or headers added to the request in
//   order, one set per request (a DPoP proof each), handed out with the bodies. cycle: true
//   to go round them again (reuse intended); false when each body or header set must be sent
//   at most once: running out still goes round, but is reported.
// expectedStatus: undefined (the answers measured are the 2xx ones), or the one status the run
// is about (400 for a poll answered authorization_pending): its latencies are measured, and
// every other status counts as an error.
// Posts back one measurement (latencies of the expected responses, in ms, at full resolution).
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

const {
  url,
  method,
  headers,
  bodies,
  headersPerRequest,
  cycle,
  connections,
  warmupSeconds,
  durationSeconds,
  expectedStatus,
} = workerData;
const expected = (statusCode) =>
  expectedStatus === undefined ? statusCode >= 200 && statusCode < 300 : statusCode === expectedStatus;

const manyBodies = bodies !== undefined && bodies.length > 1;
// How many requests the prepared bodies and header sets last for.
const pool = Math.max(manyBodies ? bodies.length : 0, headersPerRequest?.length ?? 0);
let handedOut = 0;
const requests =
  pool > 0
    ? [
        {
          // Called once per request sent (autocannon rebuilds a request that has a
          // setupRequest every time), in the warm-up and the measured run alike: a body or
          // header set handed out here is spent, whether or not its response arrives in time.
          setupRequest: (request) => {
            const next = { ...request };
            if (manyBodies) next.body = bodies[handedOut % bodies.length];
            if (headersPerRequest !== undefined)
              next.headers = { ...request.headers, ...headersPerRequest[handedOut % headersPerRequest.length] };
            handedOut += 1;
            return next;
          },
        },
      ]
    : undefined;

// autocannon's own latency histogram has 1 ms resolution; the 'response' event carries
// the exact time, so the percentiles are computed from every sample instead. The tracker
// returned with a warm-up reports the measured run only.
const latencies = [];
let responses = 0;
const tracker = autocannon({
  url,
  method,
  headers,
  body: bodies?.length === 1 ? bodies[0] : undefined,
  requests,
  connections,
  duration: durationSeconds,
  warmup: warmupSeconds > 0 ? { connections, duration: warmupSeconds } : undefined,
});
tracker.on('response', (_client, statusCode, _bytes, responseTime) => {
  responses += 1;
  if (expected(statusCode)) latencies.push(responseTime);
});
const result = await tracker;

const sorted = Float64Array.from(latencies).sort();
const percentile = (p) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const spent = Math.min(handedOut, pool);
const statusCodes = Object.fromEntries(
  Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]),
);
parentPort.postMessage({
  requests: responses,
  seconds: result.duration,
  rps: responses / result.duration,
  p50: percentile(50),
  p95: percentile(95),
  p99: percentile(99),
  non2xx:
    expectedStatus === undefined
      ? result.non2xx
      : Object.entries(statusCodes)
          .filter(([code]) => Number(code) !== expectedStatus)
          .reduce((sum, [, count]) => sum + count, 0),
  expectedStatus,
  // socket errors and timeouts (autocannon counts a timeout as an error too)
  socketErrors: result.errors,
  statusCodes,
  spent,
  reusedBodies: cycle || pool === 0 ? 0 : Math.max(0, handedOut - pool),
});
