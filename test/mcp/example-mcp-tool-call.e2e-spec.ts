import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '@broker/testing';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExampleMcpServer, type ExampleMcpServer } from '../support/example-mcp-server';

const TOOL_CALL_TYPE = 'urn:agent-identity-broker:tool-call';
const PAYMENT = { to: 'acme@example.com', amount_eur: 120 };

/**
 * An authorization server as the example MCP server sees the broker: RFC 8414 metadata and a JWKS on loopback, and
 * access tokens (RFC 9068 shape) signed with its key. The example's own checks are under test here, so the tokens
 * are made to measure; the flow through the broker itself is in the CIBA end-to-end specs.
 */
interface StandInIssuer {
  readonly base: string;
  sign(claims: JWTPayload): Promise<string>;
  stop(): Promise<void>;
}

async function startStandInIssuer(): Promise<StandInIssuer> {
  const { publicKey, privateKey }: { publicKey: CryptoKey; privateKey: CryptoKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  let base = '';
  const server: Server = createServer((request, response) => {
    const body =
      request.url === '/jwks'
        ? { keys: [jwk] }
        : { issuer: base, jwks_uri: `${base}/jwks`, client_id_metadata_document_supported: true };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    sign: (claims) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ client_id: 'agent-1', agent_id: 'agent-1', sub: 'alice@example.com', ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' })
        .setIssuer(base)
        .setIssuedAt(now)
        .setExpirationTime(now + 120)
        .setJti(crypto.randomUUID())
        .sign(privateKey);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Answer {
  readonly status: number;
  readonly challenge: string | null;
  readonly body: Record<string, unknown>;
}

describe('examples/mcp/server.mjs: a critical tool runs only the call the person approved (RFC 9396)', () => {
  let issuer: StandInIssuer;
  let example: ExampleMcpServer;
  let url: string;

  beforeAll(async () => {
    issuer = await startStandInIssuer();
    const port = await freePort();
    url = `http://127.0.0.1:${port}/mcp`;
    example = await startExampleMcpServer({ port, broker: issuer.base, url });
  });

  afterAll(async () => {
    await example?.stop();
    await issuer?.stop();
  });

  /** A token for the example (its `aud`), with the tool-call entries given. */
  function approving(entries: readonly Record<string, unknown>[], claims: JWTPayload = {}): Promise<string> {
    return issuer.sign({
      aud: url,
      authorization_details: entries.map((entry) => ({ type: TOOL_CALL_TYPE, locations: [url], ...entry })),
      ...claims,
    });
  }

  /** One JSON-RPC request to /mcp with the token; the SSE answer's message, or the JSON refusal. */
  async function call(token: string, method: string, params: Record<string, unknown> = {}): Promise<Answer> {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const text = await response.text();
    const data = response.headers.get('content-type')?.startsWith('text/event-stream')
      ? (text.split('\n').find((line) => line.startsWith('data: ')) ?? 'data: {}').slice(6)
      : text;
    return {
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      body: JSON.parse(data) as Record<string, unknown>,
    };
  }

  const pay = (token: string, args: Record<string, unknown>) =>
    call(token, 'tools/call', { name: 'send_payment', arguments: args });

  function expectRefused(answer: Answer, description: RegExp): void {
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ error: 'insufficient_scope' });
    expect(answer.body.error_description).toMatch(description);
    expect(answer.challenge).toMatch(
      /^Bearer error="insufficient_scope", error_description="[^"]+", (?:scope="mcp:tools", )?resource_metadata="/,
    );
  }

  it('runs send_payment for a token approving exactly this call (member order aside), once', async () => {
    const token = await approving([{ tool: 'send_payment', arguments: { amount_eur: 120, to: 'acme@example.com' } }]);
    const paid = await pay(token, PAYMENT);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({
      result: {
        content: [
          {
            type: 'text',
            text: 'Paid 120 EUR to acme@example.com, approved by alice@example.com (example: no money moved).',
          },
        ],
      },
    });
    expectRefused(await pay(token, PAYMENT), /already used/);
  });

  it('refuses other arguments, another tool, and an approval for another server, naming the call to ask for', async () => {
    const token = await approving([{ tool: 'send_payment', arguments: PAYMENT }]);
    const more = await pay(token, { ...PAYMENT, amount_eur: 1200 });
    expectRefused(more, /approve exactly this call/);
    expect(more.challenge).not.toContain('scope="');
    expect(more.body.authorization_details).toEqual([
      {
        type: TOOL_CALL_TYPE,
        locations: [url],
        actions: ['call'],
        tool: 'send_payment',
        arguments: { ...PAYMENT, amount_eur: 1200 },
      },
    ]);
    expectRefused(await pay(token, { to: 'acme@example.com' }), /approve exactly this call/);
    expectRefused(
      await pay(await approving([{ tool: 'whoami', arguments: PAYMENT }]), PAYMENT),
      /approve exactly this call/,
    );
    const elsewhere = await issuer.sign({
      aud: url,
      scope: 'mcp:tools',
      authorization_details: [
        {
          type: TOOL_CALL_TYPE,
          locations: ['https://other.example.com/mcp'],
          tool: 'send_payment',
          arguments: PAYMENT,
        },
      ],
    });
    expectRefused(await pay(elsewhere, PAYMENT), /approve exactly this call/);
    const otherType = await issuer.sign({
      aud: url,
      scope: 'mcp:tools',
      authorization_details: [
        { type: 'payment_initiation', locations: [url], tool: 'send_payment', arguments: PAYMENT },
      ],
    });
    expectRefused(await pay(otherType, PAYMENT), /approve exactly this call/);
  });

  it('never lets the scope alone run the critical tool, and lets an approval alone run nothing else', async () => {
    const scoped = await issuer.sign({ aud: url, scope: 'mcp:tools' });
    expect((await call(scoped, 'tools/call', { name: 'whoami', arguments: {} })).status).toBe(200);
    expectRefused(await pay(scoped, PAYMENT), /approve exactly this call/);

    const approval = await approving([{ tool: 'send_payment', arguments: PAYMENT }]);
    const listed = await call(approval, 'tools/list');
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({
      result: { tools: expect.arrayContaining([expect.objectContaining({ name: 'send_payment' })]) as unknown },
    });
    const whoami = await call(approval, 'tools/call', { name: 'whoami', arguments: {} });
    expectRefused(whoami, /needs scope mcp:tools/);
    expect(whoami.challenge).toContain('scope="mcp:tools"');
  });

  it('refuses a token with neither the scope nor an approval, and one meant for another server', async () => {
    expect((await call(await issuer.sign({ aud: url }), 'tools/list')).status).toBe(403);
    const forOther = await issuer.sign({
      aud: 'https://other.example.com/mcp',
      authorization_details: [{ type: TOOL_CALL_TYPE, locations: [url], tool: 'send_payment', arguments: PAYMENT }],
    });
    const refused = await pay(forOther, PAYMENT);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: 'invalid_token' });
  });
});
