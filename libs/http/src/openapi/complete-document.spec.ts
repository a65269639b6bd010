import type { OpenAPIObject } from '@nestjs/swagger';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES_EXTENSION } from './api-errors.decorator';
import { completeOpenApiDocument } from './complete-document';

type Json = Record<string, unknown>;

/** The value at a path of keys in a document (undefined when absent). */
function at(value: unknown, ...path: (string | number)[]): unknown {
  return path.reduce<unknown>((node, key) => (node === null || typeof node !== 'object' ? undefined : (node as Record<string | number, unknown>)[key]), value);
}

/** A document as Nest generates it (OpenAPI 3.0 flavour), reduced to what each case needs. */
function nestDocument(paths: Json, schemas: Json = {}): OpenAPIObject {
  return { openapi: '3.0.0', info: { title: 't', version: '1' }, paths, components: { schemas } } as OpenAPIObject;
}

const errorCodes = (operation: unknown, status: string): unknown => at(operation, 'responses', status, 'content', 'application/json', 'schema', 'allOf', 1, 'properties', 'error', 'enum');

describe('completeOpenApiDocument', () => {
  it('says OpenAPI 3.0 `nullable` the 3.1 way: null among the types (and the enum), or one of the reference and null', () => {
    const document = completeOpenApiDocument(
      nestDocument({}, {
        Thing: {
          type: 'object',
          properties: {
            text: { type: 'string', nullable: true },
            kind: { type: 'string', enum: ['a', 'b'], nullable: true },
            other: { allOf: [{ $ref: '#/components/schemas/Other' }], nullable: true, description: 'd' },
            plain: { type: 'string', nullable: false },
          },
        },
        Other: { type: 'object', properties: { x: { type: 'string' } } },
      }),
      'admin',
    );
    const thing = at(document, 'components', 'schemas', 'Thing', 'properties');
    expect(document.openapi).toBe('3.1.0');
    expect(at(thing, 'text')).toEqual({ type: ['string', 'null'] });
    expect(at(thing, 'kind')).toEqual({ type: ['string', 'null'], enum: ['a', 'b', null] });
    expect(at(thing, 'other')).toEqual({ oneOf: [{ $ref: '#/components/schemas/Other' }, { type: 'null' }], description: 'd' });
    expect(at(thing, 'plain')).toEqual({ type: 'string' });
  });

  it('closes object schemas that list their properties and leaves free-form objects open', () => {
    const document = completeOpenApiDocument(nestDocument({}, { Closed: { type: 'object', properties: { a: { type: 'string' } } }, Free: { type: 'object' }, Open: { type: 'object', properties: {}, additionalProperties: true } }), 'admin');
    expect(at(document, 'components', 'schemas', 'Closed', 'additionalProperties')).toBe(false);
    expect(at(document, 'components', 'schemas', 'Free', 'additionalProperties')).toBeUndefined();
    expect(at(document, 'components', 'schemas', 'Open', 'additionalProperties')).toBe(true);
  });

  it("documents an API operation's pipeline refusals and its own codes, grouped by status, in the API envelope", () => {
    const create = { security: [{ PrincipalHeader: [] }], requestBody: { content: {} }, parameters: [], responses: { '201': { description: 'created' } }, [ERROR_CODES_EXTENSION]: ['agent not found', 'conflict'] };
    const document = completeOpenApiDocument(nestDocument({ '/api/agents': { post: create } }), 'admin');
    const operation = at(document, 'paths', '/api/agents', 'post');
    expect(Object.keys(at(operation, 'responses') as Json)).toEqual(['201', '400', '401', '403', '404', '409', '413', '415', '500', '503']);
    expect(errorCodes(operation, '400')).toEqual(['bad request', 'invalid request body', 'validation failed']);
    expect(errorCodes(operation, '401')).toEqual(['unauthorized']);
    expect(errorCodes(operation, '403')).toEqual(['forbidden']);
    expect(errorCodes(operation, '404')).toEqual(['agent not found']);
    expect(at(operation, 'responses', '409', 'content', 'application/json', 'schema', 'allOf', 0)).toEqual({ $ref: '#/components/schemas/ApiError' });
    expect(at(operation, ERROR_CODES_EXTENSION)).toBeUndefined();
  });

  it('documents the body limit and media type on a safe operation too, but no body refusal; an admin one can be forbidden (roles)', () => {
    const list = { security: [{ PrincipalHeader: [] }], parameters: [{ name: 'service_id', in: 'query' }], responses: { '200': { description: 'ok' } } };
    const operation = at(completeOpenApiDocument(nestDocument({ '/api/permission-sets': { get: list } }), 'admin'), 'paths', '/api/permission-sets', 'get');
    expect(Object.keys(at(operation, 'responses') as Json)).toEqual(['200', '400', '401', '403', '413', '415', '500', '503']);
    expect(errorCodes(operation, '400')).toEqual(['bad request', 'invalid request']);
    expect(errorCodes(operation, '403')).toEqual(['forbidden']);
    const own = at(completeOpenApiDocument(nestDocument({ '/api/grants': { get: { security: [{ PrincipalHeader: [] }], parameters: [{ name: 'agent_id', in: 'query' }], responses: { '200': { description: 'ok' } } } } }), 'enduser'), 'paths', '/api/grants', 'get');
    expect(Object.keys(at(own, 'responses') as Json)).toEqual(['200', '400', '401', '413', '415', '500', '503']);
  });

  it('documents no 401 where the principal is optional (`{}` among the requirements), but a bad one is still a bad request', () => {
    const callback = { security: [{ preAuth: [] }, {}], parameters: [{ name: 'state', in: 'query' }], responses: { '302': { description: 'redirect' } } };
    const operation = at(completeOpenApiDocument(nestDocument({ '/api/third-party/{serviceId}/oauth2/callback': { get: callback } }), 'enduser'), 'paths', '/api/third-party/{serviceId}/oauth2/callback', 'get');
    expect(Object.keys(at(operation, 'responses') as Json)).toEqual(['302', '400', '413', '415', '500', '503']);
    expect(errorCodes(operation, '400')).toEqual(['bad request']);
  });

  it('documents an OAuth2 operation in the OAuth envelope, keeps a status the operation documented itself, and marks a public operation public', () => {
    const token = { requestBody: { content: {} }, responses: { '200': { description: 'ok' }, '503': { description: 'own' } }, [ERROR_CODES_EXTENSION]: ['invalid_grant', 'invalid_client'] };
    const document = completeOpenApiDocument(nestDocument({ '/oauth2/token': { post: token } }), 'enduser');
    const operation = at(document, 'paths', '/oauth2/token', 'post');
    expect(errorCodes(operation, '400')).toEqual(['invalid_grant', 'invalid_request']);
    expect(errorCodes(operation, '401')).toEqual(['invalid_client']);
    expect(at(operation, 'responses', '400', 'content', 'application/json', 'schema', 'allOf', 0)).toEqual({ $ref: '#/components/schemas/OAuthError' });
    expect(at(operation, 'responses', '503')).toEqual({ description: 'own' });
    expect(at(operation, 'security')).toEqual([]);
    expect(at(document, 'components', 'schemas', 'OAuthError', 'required')).toEqual(['error', 'error_description']);
  });

  it('makes the first sentence of the JSDoc the summary and the whole text the description', () => {
    const get = { summary: 'Agent detail; with a token,\nalso the context. More text.', responses: { '200': { description: 'ok' } } };
    const short = { summary: 'Public signing keys.', responses: { '200': { description: 'ok' } } };
    const document = completeOpenApiDocument(nestDocument({ '/api/a': { get }, '/api/b': { get: short } }), 'enduser');
    expect(at(document, 'paths', '/api/a', 'get', 'summary')).toBe('Agent detail');
    expect(at(document, 'paths', '/api/a', 'get', 'description')).toBe('Agent detail; with a token, also the context. More text.');
    expect(at(document, 'paths', '/api/b', 'get', 'summary')).toBe('Public signing keys');
    expect(at(document, 'paths', '/api/b', 'get', 'description')).toBeUndefined();
  });
});
