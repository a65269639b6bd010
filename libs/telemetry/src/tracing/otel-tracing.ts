import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import {
  createContextKey,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { BrokerConfig } from '@broker/config';
import { installChildSpans, type ChildSpans, type WithStatus } from './child-spans';
import { sqlOperation } from './sql-operation';
import { Tracing, type RemoteParent, type ServerSpan } from './tracing';

/**
 * The OpenTelemetry implementation of `Tracing`, imported by `createTracing` only
 * when `telemetry.tracing.enabled` is true (a broker without tracing never loads this
 * file nor the SDK). Nothing is registered globally (no global tracer provider, context
 * manager or propagator): several brokers in one process (the tests) keep their own
 * provider, and the request's context says which tracer its child spans belong to.
 */

/** One context manager for the process (AsyncLocalStorage); a request's context carries its broker's tracer. */
const contextManager = new AsyncLocalStorageContextManager().enable();
const propagator = new W3CTraceContextPropagator();
const TRACER = createContextKey('agent-identity-broker tracer');
// OpenTelemetry HTTP semantic conventions: any other method is `_OTHER` (a caller never chooses a span name).
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

function knownMethod(method: string): string {
  return KNOWN_METHODS.has(method) ? method : '_OTHER';
}

/** The error's class of failure for `error.type`: an outbound reason, a SQLSTATE, or the error's name; never its message. */
function errorType(error: unknown): string {
  const { reason, code, name } = (error ?? {}) as { reason?: unknown; code?: unknown; name?: unknown };
  if (typeof reason === 'string' && /^[a-z_]{1,40}$/.test(reason)) return reason;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  return typeof name === 'string' && /^[A-Za-z]{1,60}$/.test(name) ? name : 'Error';
}

class OtelServerSpan implements ServerSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly flags: string;
  private ended = false;

  constructor(
    private readonly span: Span,
    private readonly context: Context,
    private readonly method: string,
  ) {
    const { traceId, spanId, traceFlags } = span.spanContext();
    this.traceId = traceId;
    this.spanId = spanId;
    this.flags = traceFlags & TraceFlags.SAMPLED ? '01' : '00';
  }

  run<T>(work: () => T): T {
    return contextManager.with(this.context, work);
  }

  end(status: number, route: string | null): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.span.isRecording()) return;
    // Span name `METHOD route-template` (never the raw path); the method alone when no route matched.
    if (route !== null) this.span.updateName(`${this.method} ${route}`).setAttribute('http.route', route);
    this.span.setAttribute('http.response.status_code', status);
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', String(status));
    this.span.end();
  }
}

/** Child spans of the current request's recorded SERVER span; nothing (but the propagation) outside one. */
const CHILD_SPANS: ChildSpans = {
  async statement<T>(sql: string, work: () => Promise<T>): Promise<T> {
    const active = contextManager.active();
    const tracer = active.getValue(TRACER) as Tracer | undefined;
    if (tracer === undefined || trace.getSpan(active)?.isRecording() !== true) return work();
    const operation = sqlOperation(sql);
    const span = tracer.startSpan(
      `db ${operation}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'db.system': 'postgresql', 'db.system.name': 'postgresql', 'db.operation.name': operation },
      },
      active,
    );
    try {
      return await contextManager.with(trace.setSpan(active, span), work);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', errorType(error));
      throw error;
    } finally {
      span.end();
    }
  },

  async outboundCall<T extends WithStatus>(
    method: string,
    url: string,
    headers: Record<string, string>,
    send: (headers: Record<string, string>) => Promise<T>,
  ): Promise<T> {
    const active = contextManager.active();
    const tracer = active.getValue(TRACER) as Tracer | undefined;
    const parent = trace.getSpan(active);
    if (tracer === undefined || parent === undefined) return send(headers);
    const carrier = { ...headers };
    if (!parent.isRecording()) {
      // An unsampled request: no span, but the peer learns the decision (flags 00).
      propagator.inject(active, carrier, defaultTextMapSetter);
      return send(carrier);
    }
    const target = new URL(url);
    // Never the query string, the userinfo, headers or bodies.
    const attributes: Attributes = {
      'http.request.method': knownMethod(method),
      'server.address': target.hostname,
      'url.path': target.pathname,
    };
    if (target.port !== '') attributes['server.port'] = Number(target.port);
    const span = tracer.startSpan(knownMethod(method), { kind: SpanKind.CLIENT, attributes }, active);
    const context = trace.setSpan(active, span);
    propagator.inject(context, carrier, defaultTextMapSetter);
    try {
      const answer = await contextManager.with(context, () => send(carrier));
      span.setAttribute('http.response.status_code', answer.status);
      if (answer.status >= 400)
        span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', String(answer.status));
      return answer;
    } catch (error) {
      const { status } = error as { status?: unknown };
      if (typeof status === 'number') span.setAttribute('http.response.status_code', status);
      span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', errorType(error));
      throw error;
    } finally {
      span.end();
    }
  },
};

/**
 * An OTLP/HTTP (JSON) exporter behind a batch processor, a resource naming the service, and
 * ParentBased(TraceIdRatioBased(ratio)) sampling: a new trace is recorded at the ratio, a
 * continued one as its parent decided.
 */
export class OtelTracing extends Tracing {
  readonly enabled = true;
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly release: () => void;

  constructor(settings: BrokerConfig['telemetry']['tracing']) {
    super();
    if (settings.endpoint === undefined)
      throw new Error('telemetry.tracing.endpoint is required when tracing is enabled');
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': settings.service_name }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampling_ratio) }),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.endpoint, headers: { ...settings.headers } })),
      ],
    });
    this.tracer = this.provider.getTracer('agent-identity-broker');
    this.release = installChildSpans(CHILD_SPANS);
  }

  startServerSpan(method: string, route: string | null, parent: RemoteParent | undefined): ServerSpan {
    const base =
      parent === undefined
        ? ROOT_CONTEXT
        : trace.setSpanContext(ROOT_CONTEXT, {
            traceId: parent.traceId,
            spanId: parent.spanId,
            traceFlags: Number.parseInt(parent.flags, 16) & TraceFlags.SAMPLED,
            isRemote: true,
          });
    const name = knownMethod(method);
    const attributes: Attributes = { 'http.request.method': name };
    if (route !== null) attributes['http.route'] = route;
    const span = this.tracer.startSpan(
      route === null ? name : `${name} ${route}`,
      { kind: SpanKind.SERVER, attributes },
      base,
    );
    return new OtelServerSpan(span, trace.setSpan(base, span).setValue(TRACER, this.tracer), name);
  }

  async shutdown(): Promise<void> {
    this.release();
    // Flushes the batch processor's queue to the collector, then stops the exporter.
    await this.provider.shutdown();
  }
}
