import { ApiClient, freePort, http, startTestBroker, type HttpResponse, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cibaAgent, MCP_SCOPE, paymentDetail, TOOL_CALL } from '../support/ciba-client';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const BOB = 'bob@example.com';
const CAROL = 'carol@example.com';
const MCP = 'https://payments.example.com/mcp';

/**
 * What an agent may send the backchannel authentication endpoint that it should not: malformed
 * `authorization_details` answer RFC 9396 §5's invalid_authorization_details, never a 500; a
 * `login_hint` that names nobody who allows the agent is refused the same way, byte for byte,
 * whether the person exists or not (CIBA §13 unknown_user_id).
 */
describe('CIBA: hostile backchannel authentication requests over HTTP', () => {
  let broker: TestBroker;
  let base: string;
  let agent: { id: string; secret: string };

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base } },
        oauth2_authorization_server: {
          ciba: {
            enabled: true,
            // A hint outside example.com names no principal at all.
            login_hint: { expression: 'login_hint.endsWith("@example.com") ? login_hint : ""' },
          },
        },
        approvals: { rate_limit: { max_requests_per_minute: 1_000 } },
      },
    });
    const urls = { admin: broker.url('admin'), enduser: base };
    agent = await cibaAgent(urls, {
      resourceUri: MCP,
      displayName: 'Payments Agent',
      principals: [ALICE, CAROL],
    });
    // Carol allowed the agent, then revoked it.
    const revoked = await new ApiClient(base, CAROL).delete(`/api/consent/agents/${agent.id}/grants`);
    expect(revoked.status, revoked.text).toBe(204);
    // Bob is a person the broker knows: he allows another agent, never this one.
    await cibaAgent(urls, {
      resourceUri: 'https://other.example.com/mcp',
      resourceName: 'Other MCP',
      displayName: 'Other Agent',
      principals: [BOB],
    });
  });

  afterAll(async () => {
    await broker?.stop();
  });

  /** POST /oauth2/bc-authorize as the agent (client_secret_post) with `fields` over a valid request for Alice. */
  function bcAuthorize(fields: Record<string, string>, raw?: string): Promise<HttpResponse> {
    const form = new URLSearchParams({
      client_id: agent.id,
      client_secret: agent.secret,
      login_hint: ALICE,
      scope: MCP_SCOPE,
      authorization_details: JSON.stringify([paymentDetail(MCP)]),
      ...fields,
    }).toString();
    return http(`${base}/oauth2/bc-authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: raw === undefined ? form : `${form}&${raw}`,
    });
  }

  const entry = (change: Record<string, unknown>): string => JSON.stringify([{ ...paymentDetail(MCP), ...change }]);
  const deep = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
  const deepArguments = (depth: number): Record<string, unknown> => {
    let value: Record<string, unknown> = {};
    for (let i = 0; i < depth; i += 1) value = { a: value };
    return value;
  };

  const MALFORMED: readonly (readonly [string, string])[] = [
    ['another type', entry({ type: 'payment_initiation' })],
    ['a type that only looks like ours', entry({ type: `${TOOL_CALL} ` })],
    ['an unknown member', entry({ amount: 120 })],
    ['no tool', JSON.stringify([{ ...paymentDetail(MCP), tool: undefined }])],
    ['no arguments', JSON.stringify([{ ...paymentDetail(MCP), arguments: undefined }])],
    ['arguments that are not an object', entry({ arguments: ['to', 'acme@example.com'] })],
    ['arguments nested deeper than 16', entry({ arguments: deepArguments(20) })],
    ['a tool name with a control character', entry({ tool: 'send\u0000payment' })],
    ['a risk level that does not exist', entry({ risk: 'catastrophic' })],
    ['actions other than call', entry({ actions: ['call', 'refund'] })],
    ['an MCP server that is not registered', entry({ locations: ['https://unknown.example.com/mcp'] })],
    ['two locations', entry({ locations: [MCP, MCP] })],
    ['a location that is not a URI', entry({ locations: ['not a uri'] })],
    ['two tool calls in one request', JSON.stringify([paymentDetail(MCP), paymentDetail(MCP)])],
    ['an object, not an array', JSON.stringify(paymentDetail(MCP))],
    ['an empty array', '[]'],
    ['an array of a string', '["send_payment"]'],
    ['null', 'null'],
    ['not JSON', 'send_payment(to=acme)'],
    ['truncated JSON', JSON.stringify([paymentDetail(MCP)]).slice(0, 40)],
    ['1 MiB', entry({ arguments: { memo: 'x'.repeat(1024 * 1024) } })],
    ['100 000 nested arrays', deep(100_000)],
    ['100 000 opening brackets, never closed', '['.repeat(100_000)],
    [
      '100 000 nested objects in the arguments',
      `[{"type":"${TOOL_CALL}","arguments":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}]`,
    ],
  ];

  for (const [what, details] of MALFORMED) {
    it(`refuses authorization_details with ${what}: 400 invalid_authorization_details, never a 500`, async () => {
      const response = await bcAuthorize({ authorization_details: details });
      expect(response.status, response.text.slice(0, 300)).toBe(400);
      const body = response.json<{ error: string; error_description: string }>();
      expect(body.error).toBe('invalid_authorization_details');
      expect(body.error_description.length).toBeGreaterThan(0);
      // The description names the problem; it does not echo the hostile input back.
      expect(body.error_description.length).toBeLessThan(300);
      expect(response.headers['cache-control']).toBe('no-store');
    });
  }

  it('refuses a repeated authorization_details as invalid_request, as the token endpoint refuses a repeated parameter', async () => {
    const repeated = await bcAuthorize({}, `authorization_details=${encodeURIComponent(entry({}))}`);
    expect(repeated.status).toBe(400);
    expect(repeated.json<{ error: string }>().error).toBe('invalid_request');
  });

  it('still answers a valid request after all of that (nothing was left broken)', async () => {
    const response = await bcAuthorize({});
    expect(response.status, response.text).toBe(200);
    expect(Object.keys(response.json<Record<string, unknown>>()).sort()).toEqual([
      'auth_req_id',
      'expires_in',
      'interval',
    ]);
  });

  it('refuses, byte for byte alike, a hint that names no principal, a person unknown to the broker, a known person who never allowed the agent, and one who revoked it', async () => {
    const answers: HttpResponse[] = [];
    for (const hint of ['someone@elsewhere.test', 'nobody-at-all@example.com', BOB, CAROL])
      answers.push(await bcAuthorize({ login_hint: hint }));
    const [first] = answers as [HttpResponse];
    expect(first.status).toBe(400);
    expect(first.json()).toEqual({
      error: 'unknown_user_id',
      error_description: 'the hint names no person who allows this client',
    });
    const shape = (response: HttpResponse) => ({
      status: response.status,
      body: response.text,
      'content-type': response.headers['content-type'],
      'content-length': response.headers['content-length'],
      'cache-control': response.headers['cache-control'],
    });
    for (const answer of answers) expect(shape(answer)).toEqual(shape(first));
  });
});
