import type { ServerKind } from '@broker/config';
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { completeOpenApiDocument } from './complete-document';

const TITLES: Record<ServerKind, string> = {
  enduser: 'Agent Identity Broker: end-user API',
  admin: 'Agent Identity Broker: admin API',
};

/**
 * The server's OpenAPI document, generated from its controllers and DTOs. Security
 * scheme names are part of the contract: clients and the tests name them.
 */
export function buildOpenApiDocument(app: INestApplication, server: ServerKind, principalHeader: string): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle(TITLES[server])
    .setVersion('1.0.0')
    // Relative: the server that serves the document (`GET /openapi.json`).
    .addServer('/')
    .addSecurity('PrincipalHeader', { type: 'apiKey', in: 'header', name: principalHeader });
  if (server === 'enduser') {
    builder
      .addSecurity('ClientSecretBasic', { type: 'http', scheme: 'basic', description: 'client_secret_basic (RFC 6749 §2.3.1): the form-encoded client id and secret' })
      .addSecurity('preAuth', { type: 'apiKey', in: 'header', name: principalHeader, description: 'the principal set by the SSO proxy, as PrincipalHeader' })
      .addSecurity('SessionAuth', { type: 'apiKey', in: 'cookie', name: 'session_token' })
      .addSecurity('BearerSubjectToken', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
      .addSecurity('ClientAssertion', { type: 'apiKey', in: 'header', name: 'X-Client-Assertion' })
      // OpenAPI has no scheme for two credentials at once: the bearer subject token, with the
      // gateway's client assertion in the X-Client-Assertion header.
      .addSecurity('BearerSubjectTokenClientAssertion', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'the subject token as Authorization: Bearer, plus the client assertion in X-Client-Assertion' });
  }
  return completeOpenApiDocument(SwaggerModule.createDocument(app, builder.build()), server);
}
