import { CrossSiteRequestPolicy, type BrokerRequest } from '@broker/auth';
import type { ServerKind } from '@broker/config';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { Logger } from 'nestjs-pino';
import { tokenBodyMiddleware } from './body/form-body.middleware';
import { jsonBodyMiddleware } from './body/json-body.middleware';
import { corsMiddleware } from './cors.middleware';
import { crossSiteMiddleware } from './cross-site.middleware';
import { ErrorEnvelopeFilter, isOAuthPath } from './errors/error-envelope.filter';
import { shutdownGate } from './lifecycle/lifecycle';
import { queryCountMiddleware } from './logging/query-count.middleware';
import { buildOpenApiDocument } from './openapi';
import type { BrokerRuntime } from './runtime';
import { traceMiddleware } from './trace/trace.middleware';
import { HOT_ROUTES, installHotRoutes, type HotRoute } from './hot-routes/hot-routes';
import { BrokerValidationPipe } from './validation/broker-validation.pipe';
import { ApiError } from '@broker/domain';

/**
 * The whole HTTP wiring of one server, shared by `main.ts` and the tests so tests
 * exercise the real thing. Order matters: the trace id comes first (every response,
 * even a 503 or a preflight, carries `traceresponse`), then the shutdown gate, CORS
 * (end-user `/api/*` only), the cross-site request refusal, body parsing, the request's
 * database statement counter, and finally Nest's guards, pipes and filters.
 * The application's hot routes (`HOT_ROUTES`) answer before all of it, with the same
 * trace, shutdown, envelope and log rules.
 */
export function configureApp(app: NestExpressApplication, runtime: BrokerRuntime, server: ServerKind): void {
  const { config, random, lifecycle } = runtime;
  const express = app.getHttpAdapter().getInstance();
  express.disable('x-powered-by');
  express.set('etag', false);
  // The TCP peer is what the principal guard trusts; never X-Forwarded-For.
  express.set('trust proxy', false);

  app.useLogger(app.get(Logger));
  const errors = new ErrorEnvelopeFilter(server, runtime.logger.child({ server }));

  app.use(traceMiddleware(random, config.request_context.trace.response_enabled));
  app.use(
    shutdownGate(lifecycle, (request: Request, response: Response) => {
      const { status, body, headers } = errors.toResponse(new ApiError('service unavailable', 'the server is shutting down'), request as BrokerRequest);
      for (const [name, value] of Object.entries(headers ?? {})) response.setHeader(name, value);
      response.status(status).json(body);
    }),
  );
  if (server === 'enduser') app.use('/api', corsMiddleware(config.server.enduser.cors.allowed_origins));
  // CSRF: an unsafe request from a foreign page is refused before anything parses or changes; the OAuth2 endpoints are cross-origin by design.
  app.use(crossSiteMiddleware(CrossSiteRequestPolicy.forServer(config, server), (request) => isOAuthPath(request.path)));
  // OAuth2 endpoints parse their own bodies: the token endpoint takes a form of at most 256 KiB.
  if (server === 'enduser') app.use('/oauth2/token', tokenBodyMiddleware());
  app.use(jsonBodyMiddleware((request) => isOAuthPath(request.path)));
  // Last before Nest's pipeline: every statement from here on counts for the request's log line.
  app.use(queryCountMiddleware());

  app.useGlobalPipes(new BrokerValidationPipe());
  app.useGlobalFilters(errors);
  installHotRoutes(app.getHttpServer(), app.get<HotRoute[]>(HOT_ROUTES), { random, lifecycle, errors, traceResponse: config.request_context.trace.response_enabled, logger: runtime.logger.child({ server }) });

  const document = buildOpenApiDocument(app, server, config.server[server].authentication.preauth.principal_header_name);
  express.get('/openapi.json', (_request: Request, response: Response) => {
    response.json(document);
  });
}
