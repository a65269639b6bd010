import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** OTLP span kinds (opentelemetry-proto trace.proto `SpanKind`). */
export const OTLP_SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

/** One exported span, flattened from an `ExportTraceServiceRequest` (OTLP/JSON, ids in hex). */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** The resource's attributes (`service.name`). */
  readonly resource: Readonly<Record<string, unknown>>;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
}
interface ExportTraceServiceRequest {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    const [raw] = Object.values(value);
    // OTLP/JSON carries 64-bit integers as strings.
    out[key] = 'intValue' in value ? Number(raw) : raw;
  }
  return out;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return (request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
}

/**
 * A small OpenTelemetry collector for tests: an OTLP/HTTP JSON receiver on
 * loopback that keeps every `ExportTraceServiceRequest` posted to `/v1/traces`, the raw
 * bodies (to search for secrets) and the request headers (the exporter's own headers).
 */
export class OtlpReceiver {
  /** Each export request's body as received. */
  readonly bodies: string[] = [];
  /** Each export request's headers. */
  readonly headers: IncomingMessage['headers'][] = [];

  private constructor(
    private readonly server: Server,
    /** The traces endpoint, `http://127.0.0.1:<port>/v1/traces`. */
    readonly endpoint: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      bodyOf(request).then(
        (body) => {
          if (request.method !== 'POST' || request.url !== '/v1/traces') return response.writeHead(404).end();
          receiver.bodies.push(body);
          receiver.headers.push(request.headers);
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        },
        () => response.writeHead(400).end(),
      );
    });
    return receiver;
  }

  /** Every span received so far. */
  spans(): ReceivedSpan[] {
    return this.bodies.flatMap((body) =>
      ((JSON.parse(body) as ExportTraceServiceRequest).resourceSpans ?? []).flatMap((resourceSpans) => {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
          (scope.spans ?? []).map((span) => ({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            resource,
          })),
        );
      }),
    );
  }

  /** Forgets what was received. */
  clear(): void {
    this.bodies.length = 0;
    this.headers.length = 0;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
