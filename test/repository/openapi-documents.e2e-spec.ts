import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BrokerProcess, http, pgliteStorage, writeConfigFile } from '@broker/testing';
import { describe, expect, it } from 'vitest';

/**
 * The published contracts, checked over the documents `npm run build` wrote
 * (`npm test` builds first). Each count below was non-zero when the issue was filed.
 */

type Json = Record<string, unknown>;
interface Operation {
  readonly operationId: string;
  readonly parameters?: { name: string; in: string; required?: boolean; schema?: Json }[];
  readonly requestBody?: { content: Record<string, { schema: Json }> };
  readonly responses: Record<string, { content?: Record<string, { schema: Json }>; headers?: Json }>;
}
interface Document {
  readonly openapi: string;
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components: { schemas: Record<string, Json> };
}

const FILES = { enduser: 'openapi/user-api.json', admin: 'openapi/admin-api.json' } as const;
const read = (file: string): Document => JSON.parse(readFileSync(file, 'utf8')) as Document;
const user = read(FILES.enduser);
const admin = read(FILES.admin);
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

function operations(document: Document): { path: string; method: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({ path, method, operation })),
  );
}
const everyOperation = [
  ...operations(user).map((o) => ({ ...o, server: 'enduser', document: user })),
  ...operations(admin).map((o) => ({ ...o, server: 'admin', document: admin })),
];

/** A `$ref` chain or inline schema, resolved against the document. */
function resolveSchema(document: Document, schema: Json): Json {
  const ref = schema.$ref;
  return typeof ref === 'string'
    ? resolveSchema(document, document.components.schemas[ref.replace('#/components/schemas/', '')] ?? {})
    : schema;
}
function queryNames(operation: Operation | undefined): string[] {
  return (operation?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
}
function property(document: Document, schemaName: string, name: string): Json {
  return ((document.components.schemas[schemaName]?.properties ?? {}) as Record<string, Json>)[name] ?? {};
}
/** Every schema object in the documents, with where it is. */
function* schemasIn(node: unknown, where: string): Generator<[string, Json]> {
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) yield* schemasIn(item, `${where}/${index}`);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  yield [where, node as Json];
  for (const [key, value] of Object.entries(node)) yield* schemasIn(value, `${where}/${key}`);
}

describe('the OpenAPI documents', () => {
  it('are OpenAPI 3.1: no 3.0 `nullable` left, null is a type', () => {
    for (const document of [user, admin]) {
      expect(document.openapi).toBe('3.1.0');
      const nullable = [...schemasIn(document, '#')].filter(([, node]) => 'nullable' in node).map(([where]) => where);
      expect(nullable).toEqual([]);
    }
  });

  it('declare every path parameter of every operation (25 undeclared when filed)', () => {
    const undeclared = everyOperation.flatMap(({ path, method, operation, server }) => {
      const declared = new Set(
        (operation.parameters ?? []).filter((p) => p.in === 'path' && p.required === true).map((p) => p.name),
      );
      return [...path.matchAll(/\{([^}]+)\}/g)]
        .map(([, name]) => name)
        .filter((name) => !declared.has(name!))
        .map((name) => `${server} ${method.toUpperCase()} ${path} {${name}}`);
    });
    expect(undeclared).toEqual([]);
  });

  it('declare the query parameters the servers read', () => {
    const expected: [Operation | undefined, string[]][] = [
      [user.paths['/api/consent/agents/{agentId}']?.get, ['session_token']],
      [user.paths['/api/consent/agents/{agentId}/deny']?.post, ['session_token']],
      [user.paths['/api/consent/agents/{agentId}/grants']?.post, ['session_token']],
      [user.paths['/api/approvals']?.get, ['principal', 'agent_session_id']],
      [
        user.paths['/oauth2/authorize']?.get,
        ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'],
      ],
      [
        user.paths['/api/third-party/{serviceId}/oauth2/callback']?.get,
        ['code', 'state', 'error', 'error_description'],
      ],
      [user.paths['/api/third-party/{serviceId}/oauth2/authorize']?.get, ['redirect_uri']],
      [admin.paths['/api/permission-sets']?.get, ['service_id']],
    ];
    const missing = expected.flatMap(([operation, names]) =>
      names
        .filter((name) => !queryNames(operation).includes(name))
        .map((name) => `${operation?.operationId ?? 'missing operation'} ?${name}`),
    );
    expect(missing).toEqual([]);
    const redirectUri = user.paths['/api/third-party/{serviceId}/oauth2/authorize']?.get?.parameters?.find(
      (p) => p.name === 'redirect_uri',
    );
    expect(redirectUri?.required).toBe(true);
  });

  it('describe the token endpoint: a form body of the three grants and its 200 answer', () => {
    const token = user.paths['/oauth2/token']?.post;
    const form = token?.requestBody?.content['application/x-www-form-urlencoded']?.schema;
    expect(form).toBeDefined();
    const grants = JSON.stringify(
      form === undefined
        ? {}
        : [form, ...((form.oneOf ?? form.anyOf ?? []) as Json[]).map((s) => resolveSchema(user, s))],
    );
    for (const grant of ['authorization_code', 'client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange'])
      expect(grants).toContain(grant);
    const ok = token?.responses['200']?.content?.['application/json']?.schema;
    expect(ok).toBeDefined();
    expect(JSON.stringify(ok === undefined ? {} : resolveSchema(user, ok))).toContain('access_token');
  });

  it('document error answers in the envelope of the route family on every operation (none when filed)', () => {
    const wrong = everyOperation.flatMap(({ path, method, operation, server }) => {
      const envelope = path.startsWith('/oauth2/') || path.startsWith('/.well-known/') ? 'OAuthError' : 'ApiError';
      const errors = Object.entries(operation.responses).filter(([status]) => Number(status) >= 400);
      const where = `${server} ${method.toUpperCase()} ${path}`;
      if (errors.length === 0) return [`${where}: no error answer`];
      // /health documents its 503 with its own report; every other error answer is an envelope.
      return errors
        .filter(([status]) => !(path === '/health' && status === '503'))
        .filter(
          ([, response]) =>
            !JSON.stringify(response.content?.['application/json']?.schema ?? {}).includes(
              `#/components/schemas/${envelope}`,
            ),
        )
        .map(([status]) => `${where} ${status}: not the ${envelope} envelope`);
    });
    expect(wrong).toEqual([]);
    for (const document of [user, admin])
      expect(document.components.schemas.ApiError?.required).toEqual(['error', 'message']);
    expect(user.components.schemas.OAuthError?.required).toEqual(['error', 'error_description']);
  });

  it('state the constraints the servers enforce', () => {
    const toolName = property(user, 'CreateApprovalDto', 'tool_name');
    expect([toolName.minLength, toolName.maxLength]).toEqual([1, 255]);
    // Every URL-valued property is a URI.
    const urls = [user, admin].flatMap((document) =>
      Object.entries(document.components.schemas).flatMap(([schema, body]) =>
        Object.entries((body.properties ?? {}) as Record<string, Json>)
          .filter(([name]) => /(_url|_uri|_endpoint)$/.test(name))
          .filter(([, p]) => !JSON.stringify(p).includes('"format":"uri"'))
          .map(([name]) => `${schema}.${name}`),
      ),
    );
    expect(urls).toEqual([]);
    // Unknown fields are refused: every JSON request body is closed.
    const open = everyOperation.flatMap(({ operation, path, method, document, server }) => {
      const schema = operation.requestBody?.content['application/json']?.schema;
      if (schema === undefined) return [];
      return resolveSchema(document, schema).additionalProperties === false
        ? []
        : [`${server} ${method.toUpperCase()} ${path}`];
    });
    expect(open).toEqual([]);
  });

  it('pass Redocly lint (recommended-strict)', () => {
    const output = execFileSync(
      join('node_modules', '.bin', 'redocly'),
      ['lint', '--format=stylish', FILES.enduser, FILES.admin],
      { encoding: 'utf8' },
    );
    expect(output).not.toMatch(/error|warning/);
  });

  it('are committed exactly as the build generates them (no drift)', () => {
    // `npm test` builds first, which rewrites openapi/: a difference from the commit is drift.
    const changed = execFileSync('git', ['status', '--porcelain', '--', 'openapi/'], { encoding: 'utf8' });
    expect(changed, 'run `npm run build` and commit openapi/').toBe('');
  });
});

describe('the documents served live', () => {
  it('each server serves its committed document at /openapi.json, the admin server renders it at /docs, the end-user server only when enabled', async () => {
    const { dir } = writeConfigFile({});
    const { file } = writeConfigFile({
      server: { enduser: { port: 0 }, admin: { port: 0 } },
      storage: { pglite: pgliteStorage(join(dir, 'pglite')) },
      development: { keys_file: join(dir, 'development-keys.json') },
    });
    const broker = new BrokerProcess('broker', ['--config', file]);
    try {
      const urls = await broker.listening(['enduser', 'admin']);
      for (const kind of ['enduser', 'admin'] as const) {
        const live = await http(`${urls[kind]}/openapi.json`);
        expect(live.status).toBe(200);
        expect(live.json()).toEqual(read(FILES[kind]));
      }
      const page = await http(`${urls.admin}/docs`);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(page.headers['content-security-policy']).not.toContain("script-src 'self' 'unsafe-inline'");
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.text).not.toMatch(/<script>(?!<\/script>)/);
      for (const src of [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, path]) => path!)) {
        const asset = await http(`${urls.admin}${src}`);
        expect(asset.status, src).toBe(200);
        expect(asset.text.length, src).toBeGreaterThan(0);
      }
      expect((await http(`${urls.admin}/docs/init.js`)).text).toContain("url: '/openapi.json'");
      expect((await http(`${urls.admin}/docs/package.json`)).status).toBe(404);
      expect((await http(`${urls.enduser}/docs`)).status).toBe(404);
    } finally {
      broker.signal('SIGTERM');
      await broker.exited;
    }
  });

  it('the end-user server renders its reference when server.enduser.api_docs.enabled', async () => {
    const { dir } = writeConfigFile({});
    const { file } = writeConfigFile({
      server: { enduser: { port: 0, api_docs: { enabled: true } }, admin: { port: 0, api_docs: { enabled: false } } },
      storage: { pglite: pgliteStorage(join(dir, 'pglite')) },
      development: { keys_file: join(dir, 'development-keys.json') },
    });
    const broker = new BrokerProcess('broker', ['--config', file]);
    try {
      const urls = await broker.listening(['enduser', 'admin']);
      expect((await http(`${urls.enduser}/docs`)).status).toBe(200);
      expect((await http(`${urls.enduser}/docs/swagger-ui-bundle.js`)).headers['content-type']).toBe(
        'text/javascript; charset=utf-8',
      );
      expect((await http(`${urls.admin}/docs`)).status).toBe(404);
    } finally {
      broker.signal('SIGTERM');
      await broker.exited;
    }
  });
});
