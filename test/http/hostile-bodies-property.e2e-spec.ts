import { randomUUID } from 'node:crypto';
import {
  ApiClient,
  http,
  startGatewayFixture,
  testBackends,
  type GatewayFixture,
  type HttpResponse,
  type TestBroker,
} from '@broker/testing';
import { AuthorizationRequestRepository } from '@broker/persistence';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, type RegistryFixture } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';
import { allowByOrganisation } from '../support/enterprise-authorizations';

/**
 * Generated hostile bodies (deep nesting, prototype keys, control characters,
 * numbers beyond the double range, wrong types, impossible dates, unknown fields, malformed
 * JSON) thrown at every route of both servers that could read a body, each aimed at a real
 * resource a valid body would change. Every answer is a 4xx in the route's envelope, never
 * a 5xx, and the state read back through the APIs is unchanged after every request.
 *
 * Deterministic: a fixed seed per route (fast-check prints seed and path of a failure; change
 * SEED to explore further), `RUNS` bodies per route and backend (`NO_BODY_RUNS` on an operation without one).
 */
const SEED = 19_007;
const RUNS = 20;
/**
 * Bodies per route and backend for an operation that takes no body: those bodies (`anyBody`) come from four
 * route-independent kinds (deep nesting, prototype keys, unknown fields, malformed or out-of-range JSON), each
 * refused by the same check (after authentication, before the handler runs) on every such operation; 10 draws
 * give each kind two or three per route, and the 16 such routes on both backends draw over 300 in all. Routes
 * with a body keep `RUNS`: their kinds are built from the route's own fields.
 */
const NO_BODY_RUNS = 10;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Markers replaced in the JSON text after serialisation, for what JSON.stringify cannot write. */
const DEEP = '@@deep@@';
const HUGE = '@@huge@@';
const PROTO = '@@proto@@';

interface BodyShape {
  /** `dto`: validated against a DTO class (prototype keys refused at any depth); `hand`: parsed by hand (only at the top). */
  readonly kind: 'dto' | 'hand';
  readonly valid: () => JsonObject;
  /** Fields whose text must not hold control characters (dotted paths). */
  readonly text?: readonly string[];
  /** Fields and values of a wrong type for them (never null where null is allowed). */
  readonly typed: () => Readonly<Record<string, fc.Arbitrary<Json>>>;
  /** Fields holding an RFC 3339 date-time. */
  readonly dates?: readonly string[];
}

interface Route {
  readonly name: string;
  readonly method: 'POST' | 'PUT' | 'DELETE';
  readonly url: () => string;
  readonly headers: () => Promise<Record<string, string>>;
  /** undefined: the operation takes no body. */
  readonly body?: BodyShape;
}

const notString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
  fc.constant<Json>({ a: 1 }),
);
const notArray = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant<Json>({ a: 1 }));
const notObject = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.boolean(),
  fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
);

/** A control character (tab and line breaks excepted: descriptions may hold them) or an unpaired surrogate. */
const controlCharacter = fc.constantFrom(
  '\u0000',
  '\u0001',
  '\u0007',
  '\u000b',
  '\u000c',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u009b',
  '\ud800',
  '\udfff',
);

/** A date-time that is not on the calendar or the clock. */
const impossibleDateTime = fc.oneof(
  fc
    .record({
      year: fc.integer({ min: 2030, max: 2099 }),
      month: fc.constantFrom(2, 4, 6, 9, 11),
      day: fc.constantFrom(30, 31),
    })
    .map(({ year, month, day }) => `${year}-${String(month).padStart(2, '0')}-${day}T00:00:00Z`),
  fc
    .integer({ min: 2030, max: 2099 })
    .filter((year) => year % 4 !== 0)
    .map((year) => `${year}-02-29T12:00:00Z`),
  fc.integer({ min: 13, max: 99 }).map((month) => `2031-${month}-01T00:00:00Z`),
  fc.integer({ min: 24, max: 99 }).map((hour) => `2031-01-01T${hour}:00:00Z`),
  fc.integer({ min: 60, max: 99 }).map((second) => `2031-01-01T00:00:${second}Z`),
  fc.integer({ min: 24, max: 99 }).map((hour) => `2031-01-01T00:00:00+${hour}:00`),
);

function clone(value: JsonObject): JsonObject {
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

/** Sets a dotted path (`scopes.0.description`) in a copy of `body`. */
function withValue(body: JsonObject, path: string, value: Json): JsonObject {
  const copy = clone(body);
  const keys = path.split('.');
  let at: Json = copy;
  for (const key of keys.slice(0, -1)) at = (at as Record<string, Json>)[key] as Json;
  (at as Record<string, Json>)[keys[keys.length - 1] as string] = value;
  return copy;
}

/** Paths of every plain object in `body` ('' for the body itself). */
function objectPaths(value: Json, path = ''): string[] {
  if (value === null || typeof value !== 'object') return [];
  const here = Array.isArray(value) ? [] : [path];
  return [
    ...here,
    ...Object.entries(value).flatMap(([key, child]) => objectPaths(child, path === '' ? key : `${path}.${key}`)),
  ];
}

function serialise(body: Json, depth = 70): string {
  return JSON.stringify(body)
    .replaceAll(`"${DEEP}"`, `${'['.repeat(depth)}${']'.repeat(depth)}`)
    .replaceAll(`"${HUGE}"`, '1e400')
    .replaceAll(`"${PROTO}"`, '"__proto__"');
}

/** Hostile JSON texts for a route that reads a body: each breaks a rule, so none may change anything. */
function hostileBodies(shape: BodyShape): fc.Arbitrary<string> {
  const valid = shape.valid();
  const fields = Object.keys(valid);
  const field = fc.constantFrom(...fields);
  const protoHolders = shape.kind === 'dto' ? objectPaths(valid) : [''];
  const options: fc.Arbitrary<string>[] = [
    // Deep nesting, as the whole body or as a field's value.
    fc.integer({ min: 66, max: 20_000 }).map((depth) => serialise(DEEP, depth)),
    fc
      .tuple(field, fc.integer({ min: 66, max: 5_000 }))
      .map(([name, depth]) => serialise(withValue(valid, name, DEEP), depth)),
    // A prototype key next to the valid fields.
    fc
      .tuple(
        fc.constantFrom(...protoHolders),
        fc.constantFrom(PROTO, 'constructor', 'prototype'),
        fc.oneof(
          fc.constant<Json>({}),
          fc.constant<Json>([]),
          fc.constant<Json>({ polluted: true }),
          fc.string({ maxLength: 4 }),
        ),
      )
      .map(([holder, key, value]) => serialise(withValue(valid, holder === '' ? key : `${holder}.${key}`, value))),
    // An unknown field.
    fc
      .tuple(fc.stringMatching(/^[a-z_]{1,12}$/), fc.jsonValue({ maxDepth: 2 }))
      .map(([name, value]) => serialise({ ...valid, [`unknown_${name}`]: value as Json })),
    // A number beyond the double range, as a field, inside it or in a list.
    fc
      .tuple(field, fc.constantFrom<Json>(HUGE, [HUGE], { n: HUGE }))
      .map(([name, value]) => serialise(withValue(valid, name, value))),
    // Malformed JSON: the valid text cut short.
    fc.integer({ min: 1, max: 1_000 }).map((cut) => {
      const text = serialise(valid);
      return text.slice(0, 1 + (cut % (text.length - 1)));
    }),
    // Not an object at all.
    fc.oneof(
      fc.constant('[]'),
      fc.constant('[{}]'),
      fc.array(fc.integer(), { minLength: 1, maxLength: 4 }).map((items) => JSON.stringify(items)),
    ),
  ];
  const typed = Object.entries(shape.typed());
  if (typed.length > 0)
    options.push(
      fc
        .constantFrom(...typed)
        .chain(([name, wrong]) => wrong.map((value) => serialise(withValue(valid, name, value)))),
    );
  if (shape.text !== undefined && shape.text.length > 0) {
    options.push(
      fc
        .tuple(
          fc.constantFrom(...shape.text),
          fc.string({ maxLength: 6 }),
          controlCharacter,
          fc.string({ maxLength: 6 }),
        )
        .map(([name, before, control, after]) => serialise(withValue(valid, name, `${before}${control}${after}`))),
    );
  }
  if (shape.dates !== undefined && shape.dates.length > 0)
    options.push(
      fc
        .tuple(fc.constantFrom(...shape.dates), impossibleDateTime)
        .map(([name, date]) => serialise(withValue(valid, name, date))),
    );
  return fc.oneof(...options);
}

/** Any non-empty body, for the operations that take none. */
const anyBody: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 66, max: 20_000 }).map((depth) => serialise(DEEP, depth)),
  fc
    .constantFrom(`{"${PROTO}":{}}`, '{"constructor":{"prototype":{}}}')
    .map((text) => text.replace(`"${PROTO}"`, '"__proto__"')),
  fc
    .dictionary(fc.stringMatching(/^[a-z_]{1,10}$/), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 4 })
    .map((value) => JSON.stringify(value)),
  fc.constantFrom('{"n":1e400}', '[1e400]', '{"persistence":"permanent"}', '[]', '[{}]', '{"a":', 'null'),
);

describe.each(testBackends())('hostile bodies on every route that reads one ($name)', (backend) => {
  let fixture: GatewayFixture;
  let broker: TestBroker;
  let base: string;
  let admin: ApiClient;
  let alice: ApiClient;
  let registry: RegistryFixture;
  let pending: string;
  /** Alice's pending authorization request (the agent's grant lacks mail.send, which a permission set offers). */
  let authorizationRequest: string;
  let once: string;
  let permanent: string;
  let spareKid: string;
  /** Alice's grant, as the admin API lists it. */
  let aliceGrantId: string;
  let webhookId: string;
  let resourceId: string;
  /** Alice's live enterprise authorization of the agent (what the JWT bearer grant records). */
  let enterpriseId: string;

  const ALICE = 'alice@example.com';

  async function gateway(kind: 'create' | 'consume'): Promise<Record<string, string>> {
    const subject = await fixture.subjectToken(ALICE, registry.agent);
    if (kind === 'consume') return { authorization: `Bearer ${subject}` };
    return { authorization: `Bearer ${subject}`, 'x-client-assertion': await fixture.assertion() };
  }

  async function createApproval(tool: string): Promise<string> {
    const response = await http(`${base}/api/approvals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await gateway('create')) },
      body: JSON.stringify({ metadata: {}, tool_name: tool, arguments: { path: '/tmp/x' } }),
    });
    expect(response.status, response.text).toBe(201);
    return response.json<{ data: { id: string } }>().data.id;
  }

  beforeAll(async () => {
    fixture = await startGatewayFixture({
      servers: BOTH_SERVERS,
      backend,
      subjectAudience: 'gateway',
      config: { oauth2_authorization_server: { ciba: { enabled: true } } },
    });
    ({ broker, base } = fixture);
    admin = new ApiClient(broker.url('admin'));
    alice = new ApiClient(base, ALICE);
    registry = await createRegistry(admin);
    expect(
      (
        await alice.post(`/api/consent/agents/${registry.agent}/grants`, {
          granted_permission_sets: { [registry.readMail]: [registry.mail] },
          valid_until: '2099-01-01T00:00:00Z',
        })
      ).status,
    ).toBe(201);
    aliceGrantId = (await admin.get(`/api/agents/${registry.agent}/grants`)).json<{ items: { id: string }[] }>()
      .items[0]?.id as string;
    expect(aliceGrantId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await admin.post(`/api/agents/${registry.agent}/client-credentials`)).status).toBe(201);
    spareKid = (await admin.post('/api/oauth2-server/signing-keys', { algorithm: 'ES256' })).json<{ kid: string }>()
      .kid;
    resourceId = (
      await admin.post('/api/resources', {
        display_name: 'Hostile MCP',
        resource_uri: `https://hostile-${randomUUID()}.example.com/mcp`,
        scopes: [{ scope: 'files.read', description: 'Read files' }],
      })
    ).json<{ id: string }>().id;
    webhookId = (
      await admin.post('/api/webhooks', {
        url: 'https://93.184.215.14/hooks',
        event_types: ['agent.deleted'],
        enabled: false,
      })
    ).json<{ id: string }>().id;
    enterpriseId = await allowByOrganisation(broker, {
      principal: ALICE,
      agentId: registry.agent,
      resourceUri: 'https://mcp.example.com/mcp',
    });
    pending = await createApproval('read_file');
    const now = new Date();
    const created = await broker.broker
      .server('enduser')
      .app.get(AuthorizationRequestRepository)
      .create(
        {
          id: randomUUID(),
          principal: ALICE,
          agentId: registry.agent,
          serviceId: registry.mail,
          scopes: ['mail.send'],
          permissionSetIds: [registry.allFiles],
          needsGrant: true,
          needsConnection: true,
          expiresAt: new Date(now.getTime() + 3_600_000),
          createdBy: 'gateway-1',
        },
        { maxPendingPerPrincipal: 20, maxRequestsPerMinute: 10 },
        now,
      );
    expect(created.kind).toBe('created');
    authorizationRequest = created.kind === 'created' ? created.record.id : '';
    once = await createApproval('write_file');
    permanent = await createApproval('delete_file');
    expect((await alice.post(`/api/approvals/${once}/approve`, { persistence: 'once' })).status).toBe(200);
    expect((await alice.post(`/api/approvals/${permanent}/approve`, { persistence: 'permanent' })).status).toBe(200);
  });

  afterAll(async () => {
    await fixture?.stop();
  });

  /** Everything a body could change, read back through both APIs. */
  async function state(): Promise<string> {
    const reads = await Promise.all([
      admin.get('/api/agents'),
      admin.get('/api/services'),
      admin.get('/api/permission-sets'),
      admin.get('/api/oauth2-server/signing-keys'),
      admin.get(`/api/agents/${registry.agent}/client-credentials`),
      alice.get(`/api/consent/agents/${registry.agent}/grants`),
      alice.get('/api/approvals/pending'),
      alice.get('/api/approvals/permanent'),
      alice.get(`/api/approvals/${once}`),
      alice.get('/api/third-party/sessions'),
      admin.get('/api/webhooks'),
      admin.get('/api/resources'),
      alice.get('/api/consent/enterprise-authorizations'),
    ]);
    // The authorization request as stored (its page's view counts its seconds down).
    const request = await broker.broker
      .server('enduser')
      .app.get(AuthorizationRequestRepository)
      .find(authorizationRequest);
    return JSON.stringify([...reads.map((read) => [read.status, read.json()]), request]);
  }

  const asAdmin = (): Promise<Record<string, string>> => Promise.resolve({ 'x-remote-user': 'admin@example.com' });
  const asAlice = (): Promise<Record<string, string>> => Promise.resolve({ 'x-remote-user': ALICE });
  const adminUrl = (path: string) => (): string => `${broker.url('admin')}${path}`;
  const userUrl = (path: string) => (): string => `${base}${path}`;

  const agentBody: BodyShape = {
    kind: 'dto',
    valid: () => ({
      display_name: 'Hostile Agent',
      description: 'Reads mail',
      client_id: 'upstream-client',
      redirect_uris: ['https://agent.example.com/cb'],
      permission_sets: [{ permission_set_id: registry.readMail, requirement_type: 'mandatory' }],
    }),
    text: ['display_name', 'description', 'client_id', 'redirect_uris.0'],
    typed: () => ({
      display_name: notString,
      description: notString,
      redirect_uris: notArray,
      permission_sets: notArray,
      'permission_sets.0': notObject,
      'permission_sets.0.permission_set_id': notString,
    }),
  };
  const serviceBody: BodyShape = {
    kind: 'dto',
    valid: () => ({
      display_name: 'Hostile Service',
      client_id: 'hostile-client',
      client_secret: 'hostile-secret',
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/authorize',
      token_endpoint: 'https://idp.example.com/token',
      scopes: [{ scope: 'mail.read', description: 'Read your mail' }],
      protected_resources: [`https://hostile-${randomUUID()}.example.com/api`],
    }),
    text: ['display_name', 'client_id', 'client_secret', 'issuer_uri', 'scopes.0.description', 'protected_resources.0'],
    typed: () => ({
      display_name: notString,
      client_id: notString,
      issuer_uri: notString,
      scopes: notArray,
      'scopes.0': notObject,
      protected_resources: notArray,
    }),
  };
  const permissionSetBody: BodyShape = {
    kind: 'dto',
    valid: () => ({
      name: `Hostile set ${randomUUID()}`,
      description: 'Mail',
      service_scopes: [{ service_id: registry.mail, scopes: ['mail.read'], requirement_type: 'optional' }],
    }),
    text: ['name', 'description'],
    typed: () => ({
      name: notString,
      description: notString,
      service_scopes: notArray,
      'service_scopes.0.scopes': notArray,
      'service_scopes.0.service_id': notString,
    }),
  };
  const resourceBody: BodyShape = {
    kind: 'dto',
    valid: () => ({
      display_name: 'Hostile MCP',
      description: 'Files',
      resource_uri: `https://hostile-${randomUUID()}.example.com/mcp`,
      scopes: [{ scope: 'files.read', description: 'Read files' }],
    }),
    text: ['display_name', 'description', 'resource_uri', 'scopes.0.scope', 'scopes.0.description'],
    typed: () => ({
      display_name: notString,
      resource_uri: notString,
      scopes: notArray,
      'scopes.0': notObject,
      'scopes.0.description': notString,
    }),
  };

  const webhookBody: BodyShape = {
    kind: 'dto',
    // A public address written as an IP (no DNS), disabled: nothing is ever sent to it.
    valid: () => ({
      url: 'https://93.184.215.14/hooks',
      event_types: ['agent.deleted', 'approval.requested'],
      enabled: false,
    }),
    text: ['url'],
    typed: () => ({
      url: notString,
      event_types: notArray,
      'event_types.0': notString,
      enabled: fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant<Json>([])),
    }),
  };

  const routes: Route[] = [
    // Admin server.
    { name: 'POST /api/agents', method: 'POST', url: adminUrl('/api/agents'), headers: asAdmin, body: agentBody },
    {
      name: 'PUT /api/agents/{id}',
      method: 'PUT',
      url: () => adminUrl(`/api/agents/${registry.agent}`)(),
      headers: asAdmin,
      body: agentBody,
    },
    { name: 'POST /api/services', method: 'POST', url: adminUrl('/api/services'), headers: asAdmin, body: serviceBody },
    {
      name: 'PUT /api/services/{id}',
      method: 'PUT',
      url: () => adminUrl(`/api/services/${registry.calendar}`)(),
      headers: asAdmin,
      body: serviceBody,
    },
    {
      name: 'POST /api/resources',
      method: 'POST',
      url: adminUrl('/api/resources'),
      headers: asAdmin,
      body: resourceBody,
    },
    {
      name: 'PUT /api/resources/{id}',
      method: 'PUT',
      url: () => adminUrl(`/api/resources/${resourceId}`)(),
      headers: asAdmin,
      body: resourceBody,
    },
    {
      name: 'POST /api/permission-sets',
      method: 'POST',
      url: adminUrl('/api/permission-sets'),
      headers: asAdmin,
      body: permissionSetBody,
    },
    {
      name: 'PUT /api/permission-sets/{id}',
      method: 'PUT',
      url: () => adminUrl(`/api/permission-sets/${registry.readMail}`)(),
      headers: asAdmin,
      body: permissionSetBody,
    },
    {
      name: 'POST /api/agents/{id}/client-credentials',
      method: 'POST',
      url: () => adminUrl(`/api/agents/${registry.agent}/client-credentials`)(),
      headers: asAdmin,
    },
    {
      name: 'DELETE /api/agents/{id}/client-credentials',
      method: 'DELETE',
      url: () => adminUrl(`/api/agents/${registry.agent}/client-credentials`)(),
      headers: asAdmin,
    },
    {
      name: 'PUT /api/agents/{id}/suspension',
      method: 'PUT',
      url: () => adminUrl(`/api/agents/${registry.agent}/suspension`)(),
      headers: asAdmin,
      body: {
        kind: 'dto',
        valid: () => ({ reason: 'Credentials leaked in a public repository' }),
        text: ['reason'],
        typed: () => ({ reason: notString }),
      },
    },
    {
      name: 'DELETE /api/agents/{id}/suspension',
      method: 'DELETE',
      url: () => adminUrl(`/api/agents/${registry.agent}/suspension`)(),
      headers: asAdmin,
    },
    {
      name: 'DELETE /api/agents/{id}/grants',
      method: 'DELETE',
      url: () => adminUrl(`/api/agents/${registry.agent}/grants`)(),
      headers: asAdmin,
    },
    {
      name: 'DELETE /api/agents/{id}/grants/{id}',
      method: 'DELETE',
      url: () => adminUrl(`/api/agents/${registry.agent}/grants/${aliceGrantId}`)(),
      headers: asAdmin,
    },
    {
      name: 'POST /api/oauth2-server/signing-keys',
      method: 'POST',
      url: adminUrl('/api/oauth2-server/signing-keys'),
      headers: asAdmin,
      body: {
        kind: 'dto',
        valid: () => ({ algorithm: 'ES256' }),
        text: ['algorithm'],
        typed: () => ({ algorithm: notString }),
      },
    },
    {
      name: 'PUT /api/oauth2-server/signing-keys/{kid}/current',
      method: 'PUT',
      url: () => adminUrl(`/api/oauth2-server/signing-keys/${spareKid}/current`)(),
      headers: asAdmin,
    },
    {
      name: 'DELETE /api/oauth2-server/signing-keys/{kid}',
      method: 'DELETE',
      url: () => adminUrl(`/api/oauth2-server/signing-keys/${spareKid}`)(),
      headers: asAdmin,
    },
    { name: 'POST /api/webhooks', method: 'POST', url: adminUrl('/api/webhooks'), headers: asAdmin, body: webhookBody },
    {
      name: 'PUT /api/webhooks/{id}',
      method: 'PUT',
      url: () => adminUrl(`/api/webhooks/${webhookId}`)(),
      headers: asAdmin,
      body: webhookBody,
    },
    {
      name: 'POST /api/webhooks/{id}/secret',
      method: 'POST',
      url: () => adminUrl(`/api/webhooks/${webhookId}/secret`)(),
      headers: asAdmin,
    },
    // End-user server: consent and sessions.
    {
      name: 'POST /api/consent/agents/{id}/grants',
      method: 'POST',
      url: () => userUrl(`/api/consent/agents/${registry.agent}/grants`)(),
      headers: asAlice,
      body: {
        kind: 'dto',
        valid: () => ({
          granted_permission_sets: { [registry.readMail]: [registry.mail, registry.files] },
          valid_until: '2098-01-01T00:00:00Z',
        }),
        typed: () => ({
          granted_permission_sets: notObject,
          valid_until: notString,
          [`granted_permission_sets.${registry.readMail}`]: fc.oneof(
            fc.string({ maxLength: 4 }),
            fc.integer(),
            fc.constant<Json>({}),
          ),
        }),
        dates: ['valid_until'],
      },
    },
    {
      name: 'DELETE /api/consent/agents/{id}/grants',
      method: 'DELETE',
      url: () => userUrl(`/api/consent/agents/${registry.agent}/grants`)(),
      headers: asAlice,
    },
    {
      name: 'POST /api/consent/agents/{id}/deny',
      method: 'POST',
      url: () => userUrl(`/api/consent/agents/${registry.agent}/deny`)(),
      headers: asAlice,
    },
    {
      name: 'POST /api/consent/agents/{id}/expired',
      method: 'POST',
      url: () => userUrl(`/api/consent/agents/${registry.agent}/expired`)(),
      headers: asAlice,
    },
    {
      name: 'POST /api/third-party/{id}/session/refresh',
      method: 'POST',
      url: () => userUrl(`/api/third-party/${registry.mail}/session/refresh`)(),
      headers: asAlice,
    },
    {
      name: 'DELETE /api/third-party/{id}/session',
      method: 'DELETE',
      url: () => userUrl(`/api/third-party/${registry.mail}/session`)(),
      headers: asAlice,
    },
    {
      name: 'DELETE /api/consent/enterprise-authorizations/{id}',
      method: 'DELETE',
      url: () => userUrl(`/api/consent/enterprise-authorizations/${enterpriseId}`)(),
      headers: asAlice,
    },
    {
      name: 'DELETE /api/agents/{id}/enterprise-authorizations/{id}',
      method: 'DELETE',
      url: () => adminUrl(`/api/agents/${registry.agent}/enterprise-authorizations/${enterpriseId}`)(),
      headers: asAdmin,
    },
    // End-user server: tool approvals, the user's side and the gateway's.
    {
      name: 'POST /api/approvals/{id}/approve',
      method: 'POST',
      url: () => userUrl(`/api/approvals/${pending}/approve`)(),
      headers: asAlice,
      body: {
        kind: 'hand',
        valid: () => ({ persistence: 'permanent', params_pattern: { path: '/tmp/*' } }),
        text: ['persistence'],
        typed: () => ({ persistence: notString, params_pattern: notObject }),
      },
    },
    {
      name: 'POST /api/approvals/{id}/scope-preview',
      method: 'POST',
      url: () => userUrl(`/api/approvals/${pending}/scope-preview`)(),
      headers: asAlice,
      body: {
        kind: 'hand',
        valid: () => ({ params_pattern: { path: '/tmp/*' } }),
        typed: () => ({ params_pattern: notObject }),
      },
    },
    {
      name: 'POST /api/approvals/{id}/deny',
      method: 'POST',
      url: () => userUrl(`/api/approvals/${pending}/deny`)(),
      headers: asAlice,
      body: {
        kind: 'dto',
        valid: () => ({ persistence: 'permanent' }),
        text: ['persistence'],
        typed: () => ({ persistence: notString }),
      },
    },
    // End-user server: authorization requests (the person's Allow and Deny).
    {
      name: 'POST /api/authorization-requests/{id}/allow',
      method: 'POST',
      url: () => userUrl(`/api/authorization-requests/${authorizationRequest}/allow`)(),
      headers: asAlice,
      body: {
        kind: 'dto',
        valid: () => ({ valid_until: '2099-01-01T00:00:00Z' }),
        typed: () => ({ valid_until: notString }),
        dates: ['valid_until'],
      },
    },
    {
      name: 'POST /api/authorization-requests/{id}/deny',
      method: 'POST',
      url: () => userUrl(`/api/authorization-requests/${authorizationRequest}/deny`)(),
      headers: asAlice,
    },
    {
      name: 'POST /api/approvals/{id}/revoke',
      method: 'POST',
      url: () => userUrl(`/api/approvals/${permanent}/revoke`)(),
      headers: asAlice,
    },
    {
      name: 'POST /api/approvals',
      method: 'POST',
      url: userUrl('/api/approvals'),
      headers: () => gateway('create'),
      body: {
        kind: 'hand',
        valid: () => ({
          metadata: { agent_session_id: 'session-1' },
          tool_name: 'send_email',
          arguments: { to: 'bob@example.com' },
          risk_level: 'low',
        }),
        text: ['tool_name', 'metadata.agent_session_id'],
        typed: () => ({
          metadata: notObject,
          tool_name: notString,
          arguments: notObject,
          risk_level: notString,
          'metadata.agent_session_id': fc.oneof(fc.integer(), fc.boolean(), fc.constant<Json>([])),
        }),
      },
    },
    {
      name: 'POST /api/approvals/{id}/consume',
      method: 'POST',
      url: () => userUrl(`/api/approvals/${once}/consume`)(),
      headers: () => gateway('consume'),
    },
    // Last: were one of these to give way, the routes above would have nothing left to aim at.
    {
      name: 'DELETE /api/agents/{id}',
      method: 'DELETE',
      url: () => adminUrl(`/api/agents/${registry.agent}`)(),
      headers: asAdmin,
    },
    {
      name: 'DELETE /api/services/{id}',
      method: 'DELETE',
      url: () => adminUrl(`/api/services/${registry.calendar}`)(),
      headers: asAdmin,
    },
    {
      name: 'DELETE /api/permission-sets/{id}',
      method: 'DELETE',
      url: () => adminUrl(`/api/permission-sets/${registry.calendarSet}`)(),
      headers: asAdmin,
    },
    {
      name: 'DELETE /api/resources/{id}',
      method: 'DELETE',
      url: () => adminUrl(`/api/resources/${resourceId}`)(),
      headers: asAdmin,
    },
    {
      name: 'DELETE /api/webhooks/{id}',
      method: 'DELETE',
      url: () => adminUrl(`/api/webhooks/${webhookId}`)(),
      headers: asAdmin,
    },
  ];

  function expectClientError(response: HttpResponse, route: string, body: string): void {
    const where = `${route} with ${body.slice(0, 120)}: ${response.status} ${response.text.slice(0, 200)}`;
    expect(response.status, where).toBeGreaterThanOrEqual(400);
    expect(response.status, where).toBeLessThan(500);
    const envelope = response.json<Record<string, unknown>>();
    expect(typeof envelope.error, where).toBe('string');
    expect(typeof envelope.message, where).toBe('string');
  }

  it('covers every route of both OpenAPI documents that could take a body', async () => {
    const covered = new Set(routes.map((route) => route.name));
    for (const url of [broker.url('admin'), base]) {
      const document = (await http(`${url}/openapi.json`)).json<{ paths: Record<string, Record<string, unknown>> }>();
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const method of Object.keys(operations).filter((m) => ['post', 'put', 'patch', 'delete'].includes(m))) {
          const name = `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, (segment) => (segment === '{kid}' ? '{kid}' : '{id}'))}`;
          // Forms, tested below.
          if (
            name === 'POST /oauth2/token' ||
            name === 'POST /oauth2/revoke' ||
            name === 'POST /oauth2/introspect' ||
            name === 'POST /oauth2/bc-authorize'
          )
            continue;
          expect(covered, `${name} is not in the property test`).toContain(name);
        }
      }
    }
  });

  for (const [index, route] of routes.entries()) {
    it(`${route.name}: every hostile body is a 4xx {error, message} and changes nothing`, async () => {
      let last = await state();
      await fc.assert(
        fc.asyncProperty(route.body === undefined ? anyBody : hostileBodies(route.body), async (body) => {
          const response = await http(route.url(), {
            method: route.method,
            headers: { 'content-type': 'application/json', ...(await route.headers()) },
            body,
          });
          expectClientError(response, route.name, body);
          const now = await state();
          const unchanged = now === last;
          last = now;
          expect(unchanged, `${route.name} with ${body.slice(0, 120)} changed the state`).toBe(true);
        }),
        { seed: SEED + index, numRuns: route.body === undefined ? NO_BODY_RUNS : RUNS },
      );
    });
  }

  it('POST /oauth2/token: every hostile form is a 4xx {error, error_description}', async () => {
    const hostileForm = fc.oneof(
      fc.stringMatching(/^[a-z_]{1,8}$/).map((name) => `grant_type=client_credentials&${name}=1&${name}=2`),
      controlCharacter.map(
        (control) =>
          `grant_type=client_credentials${encodeURIComponent(control === '\ud800' || control === '\udfff' ? '\u0000' : control)}&client_id=${registry.agent}`,
      ),
      fc
        .integer({ min: 66, max: 20_000 })
        .map((depth) => `grant_type=${'['.repeat(depth)}&client_id=${registry.agent}&client_secret=x`),
      fc.constantFrom(
        'grant_type=client_credentials&client_id=%00&client_secret=%00',
        `grant_type=client_credentials&client_id=${registry.agent}&client_secret=1e400`,
        'grant_type=%E0%A4%A',
        '%%%',
      ),
    );
    await fc.assert(
      fc.asyncProperty(hostileForm, async (form) => {
        const response = await http(`${base}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form,
        });
        expect(response.status, form.slice(0, 80)).toBeGreaterThanOrEqual(400);
        expect(response.status, form.slice(0, 80)).toBeLessThan(500);
        const envelope = response.json<Record<string, unknown>>();
        expect(typeof envelope.error).toBe('string');
        expect(typeof envelope.error_description).toBe('string');
      }),
      { seed: SEED, numRuns: RUNS * 2 },
    );
  });

  it('POST /oauth2/bc-authorize: every hostile form is a 4xx {error, error_description} and makes no request', async () => {
    // The agent's real secret and a person who allows it: only the hostile part can be refused.
    const credentials = await admin.post(`/api/agents/${registry.agent}/client-credentials`, {});
    // 201 for the agent's first secret, 200 when an earlier route of this file already made one (a rotation).
    expect([200, 201]).toContain(credentials.status);
    const secret = credentials.json<{ client_secret: string }>().client_secret;
    const valid = `client_id=${registry.agent}&client_secret=${encodeURIComponent(secret)}&login_hint=${encodeURIComponent(ALICE)}`;
    const details = (text: string) => `${valid}&authorization_details=${encodeURIComponent(text)}`;
    const hostileForm = fc.oneof(
      fc.stringMatching(/^[a-z_]{1,8}$/).map((name) => `${details('[]')}&${name}=1&${name}=2`),
      controlCharacter.map((control) =>
        details(
          `[{"type":"urn:agent-identity-broker:tool-call","tool":"a${control === '\ud800' || control === '\udfff' ? '\u0000' : control}"}]`,
        ),
      ),
      fc.integer({ min: 33, max: 100_000 }).map((depth) => details('['.repeat(depth))),
      fc
        .integer({ min: 17, max: 2_000 })
        .map((depth) => details(`[{"arguments":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}]`)),
      fc.jsonValue({ maxDepth: 3 }).map((value) => details(JSON.stringify(value))),
      fc.string({ maxLength: 40 }).map(details),
      fc.constantFrom(
        details('[{"type":"urn:agent-identity-broker:tool-call","arguments":{"n":1e400}}]'),
        details(
          `[{"type":"urn:agent-identity-broker:tool-call","tool":"t","arguments":{},"x":"${'y'.repeat(70_000)}"}]`,
        ),
        `${valid}&authorization_details=%E0%A4%A`,
        `${valid}&request=eyJhbGciOiJub25lIn0.e30.`,
        '%%%',
      ),
    );
    const before = await alice.get('/api/approvals/pending');
    await fc.assert(
      fc.asyncProperty(hostileForm, async (form) => {
        const response = await http(`${base}/oauth2/bc-authorize`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form,
        });
        const where = `${form.slice(0, 160)}: ${response.status} ${response.text.slice(0, 200)}`;
        expect(response.status, where).toBeGreaterThanOrEqual(400);
        expect(response.status, where).toBeLessThan(500);
        const envelope = response.json<Record<string, unknown>>();
        expect(typeof envelope.error, where).toBe('string');
        expect(typeof envelope.error_description, where).toBe('string');
      }),
      { seed: SEED, numRuns: RUNS * 2 },
    );
    expect((await alice.get('/api/approvals/pending')).text).toBe(before.text);
  });

  for (const path of ['/oauth2/revoke', '/oauth2/introspect']) {
    it(`POST ${path}: every hostile form is a 4xx {error, error_description}`, async () => {
      // Each carries a wrong client secret, so even a well-formed one is refused (401 invalid_client).
      const hostileForm = fc.oneof(
        fc
          .stringMatching(/^[a-z_]{1,8}$/)
          .map((name) => `token=t&${name}=1&${name}=2&client_id=${registry.agent}&client_secret=x`),
        controlCharacter.map(
          (control) =>
            `token=t${encodeURIComponent(control === '\ud800' || control === '\udfff' ? '\u0000' : control)}&client_id=${registry.agent}&client_secret=x`,
        ),
        fc
          .integer({ min: 66, max: 20_000 })
          .map((depth) => `token=${'['.repeat(depth)}&client_id=${registry.agent}&client_secret=x`),
        fc.constantFrom(
          'token=t&client_id=%00&client_secret=%00',
          `token=1e400&client_id=${registry.agent}&client_secret=1e400`,
          'token=%E0%A4%A',
          '%%%',
        ),
      );
      await fc.assert(
        fc.asyncProperty(hostileForm, async (form) => {
          const response = await http(`${base}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: form,
          });
          expect(response.status, form.slice(0, 80)).toBeGreaterThanOrEqual(400);
          expect(response.status, form.slice(0, 80)).toBeLessThan(500);
          const envelope = response.json<Record<string, unknown>>();
          expect(typeof envelope.error).toBe('string');
          expect(typeof envelope.error_description).toBe('string');
        }),
        { seed: SEED, numRuns: RUNS },
      );
    });
  }
});
