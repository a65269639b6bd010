import { CrossSiteRequestPolicy } from '@broker/auth';
import type { ServerKind } from '@broker/config';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { Logger } from 'nestjs-pino';
import { BACKCHANNEL_BODY_LIMIT_BYTES, tokenBodyMiddleware } from './body/form-body.middleware';
import { jsonBodyMiddleware } from './body/json-body.middleware';
import { adminConsoleSite } from './admin-console/admin-console.middleware';
import { consoleSite } from './console/console.middleware';
import { corsMiddleware } from './cors.middleware';
import { crossSiteMiddleware } from './cross-site.middleware';
import { ErrorEnvelopeFilter, isOAuthPath } from './errors/error-envelope.filter';
import { shutdownGate } from './lifecycle/shutdown-gate';
import { queryCountMiddleware } from './logging/query-count.middleware';
import { requestLoggingMiddleware } from './logging/request-logging';
import { installApiReference } from './openapi/api-reference';
import { buildOpenApiDocument } from './openapi/build-document';
import type { HttpRuntime } from './http-runtime';
import { createTraceStart } from './trace/start-trace';
import { createSpanStart } from './trace/start-server-span';
import { spanContextMiddleware, traceMiddleware, tracedMiddleware } from './trace/trace.middleware';
import { HOT_ROUTES, type HotRoute } from './hot-routes/hot-route';
import { httpMetricsMiddleware } from './metrics/http-metrics.middleware';
import { installHotRoutes } from './hot-routes/install-hot-routes';
import { BrokerValidationPipe } from './validation/broker-validation.pipe';
import { ERROR_VOCABULARY, ErrorVocabulary } from './errors/error-vocabulary';

/** The app's vocabulary for its libraries' refusals (`ERROR_VOCABULARY`); an app without one answers them as unexpected. */
function vocabularyOf(app: NestExpressApplication): ErrorVocabulary {
  try {
    return app.get<ErrorVocabulary>(ERROR_VOCABULARY, { strict: false });
  } catch {
    return ErrorVocabulary.none;
  }
}

/**
 * The whole HTTP wiring of one server, shared by `main.ts` and the tests so tests
 * exercise the real thing. Order matters: the trace id comes first (every response,
 * even a 503 or a preflight, carries `traceresponse`), then the request's log line (so
 * refusals are logged too), the shutdown gate, the console's pages (each server its own), CORS (end-user `/api/*` only), the
 * cross-site request refusal, body parsing, the request's database statement counter,
 * and finally Nest's guards, pipes and filters.
 * The application's hot routes (`HOT_ROUTES`) answer before all of it, calling the same
 * trace start, shutdown gate, body reader, error envelope and log-line functions.
 */
export function configureApp(app: NestExpressApplication, runtime: HttpRuntime, server: ServerKind): void {
  const { config, random, lifecycle, countQueries } = runtime;
  const logger = runtime.logger.child({ server });
  const express = app.getHttpAdapter().getInstance();
  express.disable('x-powered-by');
  express.set('etag', false);
  // The TCP peer is what the principal guard trusts; never X-Forwarded-For.
  express.set('trust proxy', false);

  app.useLogger(app.get(Logger));
  // The built console's pages and assets: the person's on the end-user server, the admin console on the admin server;
  // a browser's unknown path (or refused authorization request) gets its page.
  const site = server === 'enduser' ? consoleSite(config, logger) : adminConsoleSite(config, logger);
  const errors = new ErrorEnvelopeFilter(server, logger, site?.errorPage, vocabularyOf(app));
  // Each pipeline step is one function, called by both entrances (this pipeline and the hot routes).
  const startTrace = createTraceStart(random, config.request_context.trace.response_enabled);
  // With tracing enabled, the trace start is the request's SERVER span (chosen here, once: no per-request cost when off).
  const { tracing } = runtime.telemetry;
  const startSpan = tracing.enabled
    ? createSpanStart(tracing, config.request_context.trace.response_enabled)
    : undefined;

  app.use(startSpan === undefined ? traceMiddleware(startTrace) : tracedMiddleware(startSpan));
  // The request duration histogram (route template, status class), measured from here; nothing when metrics are off.
  const requestMetrics = runtime.telemetry.metrics.httpServer(server);
  if (runtime.telemetry.metrics.enabled) app.use(httpMetricsMiddleware(requestMetrics));
  // One log line for every request the trace started, as on the hot routes: refusals below are logged too.
  app.use(requestLoggingMiddleware(logger));
  app.use(shutdownGate(lifecycle));
  // The console's pages and assets (GET/HEAD of its own paths only), before the API's body parsing.
  if (site !== undefined) app.use(site.middleware);
  if (server === 'enduser') app.use('/api', corsMiddleware(config.server.enduser.cors.allowed_origins));
  // CSRF: an unsafe request from a foreign page is refused before anything parses or changes; the OAuth2 endpoints are cross-origin by design.
  app.use(
    crossSiteMiddleware(CrossSiteRequestPolicy.forServer(config, server), (request) => isOAuthPath(request.path)),
  );
  // OAuth2 endpoints parse their own bodies: the token, revocation and introspection endpoints take a form of at most
  // 256 KiB, the backchannel authentication endpoint one of at most 2 MiB.
  if (server === 'enduser') {
    for (const path of ['/oauth2/token', '/oauth2/revoke', '/oauth2/introspect']) app.use(path, tokenBodyMiddleware());
    // Only when CIBA is on: otherwise the path is unknown and its body is never read (404 like any other).
    if (config.oauth2_authorization_server.ciba.enabled)
      app.use('/oauth2/bc-authorize', tokenBodyMiddleware(BACKCHANNEL_BODY_LIMIT_BYTES));
  }
  app.use(jsonBodyMiddleware((request) => isOAuthPath(request.path)));
  // Last before Nest's pipeline: every statement from here on counts for the request's log line.
  app.use(queryCountMiddleware(countQueries));
  if (startSpan !== undefined) app.use(spanContextMiddleware());

  app.useGlobalPipes(new BrokerValidationPipe());
  app.useGlobalFilters(errors);
  installHotRoutes(app.getHttpServer(), app.get<HotRoute[]>(HOT_ROUTES), {
    startTrace,
    startSpan,
    lifecycle,
    errors,
    logger,
    countQueries,
    requestMetrics,
  });

  const document = buildOpenApiDocument(
    app,
    server,
    config.server[server].authentication.preauth.principal_header_name,
  );
  express.get('/openapi.json', (_request: Request, response: Response) => {
    response.json(document);
  });
  if (config.server[server].api_docs.enabled) installApiReference(express, document.info.title);
}
