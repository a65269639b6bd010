import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiClient,
  completeAuthorization,
  freePort,
  http,
  launchBrowser,
  openConsolePage,
  startTestBroker,
  startThirdPartyProvider,
  type TestBroker,
  type ThirdPartyProvider,
} from '@broker/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitationCompleteNotificationSchema,
  UrlElicitationRequiredError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { fetch as streamingFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCreated } from '../support/registry-fixture';
import { BOTH_SERVERS } from '../support/servers';

const SERVICE = 'Profiles';
const GATEWAY_SUB = 'mcp-gateway';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** `node examples/mcp/gateway.mjs`, as a reader starts it, with everything it printed. */
class GatewayProcess {
  readonly output: string[] = [];
  private readonly child: ChildProcess;

  constructor(args: string[]) {
    this.child = spawn(process.execPath, ['examples/mcp/gateway.mjs', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.output.push(chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.output.push(chunk));
  }

  async listening(): Promise<void> {
    const exited = once(this.child, 'exit').then(() => {
      throw new Error(`gateway.mjs exited: ${this.output.join('')}`);
    });
    const started = (async () => {
      while (!this.output.join('').includes('MCP gateway on')) await new Promise((r) => setTimeout(r, 50));
    })();
    await Promise.race([started, exited]);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    await once(this.child, 'exit');
  }
}

/** The official SDK client with URL-mode elicitation, and the completion notifications it received. */
interface ElicitingClient {
  readonly client: Client;
  readonly completed: string[];
  /** Resolves when the server says elicitation `id` completed. */
  completion(id: string): Promise<void>;
  profile(): Promise<CallToolResult>;
}

/**
 * Authorization at the moment of need (docs/authorization-requests.md), end to end with MCP's URL-mode elicitation
 * (2025-11-25): the official SDK client calls examples/mcp/gateway.mjs's `profile` tool; the gateway's RFC 8693
 * exchange at the broker is refused with an `authorization_request`, which the gateway answers with -32042 naming the
 * broker's page; the person (Chromium) opens it, allows, connects at the provider (oidc-provider: sign in, consent) and
 * sees Done; the gateway's long poll learns `completed`, it sends notifications/elicitation/complete, and the client's
 * retry reads the profile at the provider.
 */
describe('MCP: a tool call that needs the person to allow access, through URL-mode elicitation', () => {
  let broker: TestBroker;
  let base: string;
  let provider: ThirdPartyProvider;
  let gateway: GatewayProcess;
  let browser: Browser;
  let keyDir: string;
  let privateKey: CryptoKey;
  let kid: string;
  let gatewayOrigin: string;
  let mcpUrl: string;
  let serviceId: string;
  let agentId: string;
  let identitySet: string;
  let profileSet: string;
  const tokens: string[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    const [port, gatewayPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    gatewayOrigin = `http://127.0.0.1:${gatewayPort}`;
    mcpUrl = `${gatewayOrigin}/mcp`;
    // The gateway's key, which it reads from --key: it signs its client assertions, and (as the example's trust
    // anchor) the person's tokens this test hands the MCP client.
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateKey = pair.privateKey;
    const jwk = await exportJWK(pair.privateKey);
    kid = await calculateJwkThumbprint(jwk);
    keyDir = mkdtempSync(join(tmpdir(), 'mcp-gateway-'));
    writeFileSync(join(keyDir, 'key.json'), JSON.stringify({ ...jwk, kid, alg: 'ES256' }), { mode: 0o600 });

    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base } },
        token_exchange: {
          client_assertion: { issuer_uri: gatewayOrigin, jwks_uri: `${gatewayOrigin}/jwks.json` },
          // The person's token is for the MCP server (its URL); the gateway's assertion for the broker.
          subject_token: { audience: mcpUrl },
          authorization: { cel: { expression: `client_assertion.sub == "${GATEWAY_SUB}"` } },
        },
        third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } },
        log: { level: 'warn' },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    // The callback URL names the service: registered first, the provider learns it after.
    const placeholder = 'https://placeholder.example.com';
    serviceId = await adminCreated(admin, '/api/services', {
      display_name: SERVICE,
      client_id: 'pending',
      client_secret: 'pending',
      issuer_uri: placeholder,
      authorization_endpoint: `${placeholder}/a`,
      token_endpoint: `${placeholder}/t`,
      protected_resources: ['https://placeholder.example.com/me'],
    });
    provider = await startThirdPartyProvider({
      redirectUris: [`${base}/api/third-party/${serviceId}/oauth2/callback`],
      scopes: ['profile'],
    });
    // The API the tool calls is the provider's userinfo endpoint: the service's protected resource.
    const userinfo = `${provider.issuer}/me`;
    const put = await admin.put(`/api/services/${serviceId}`, {
      display_name: SERVICE,
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
      issuer_uri: provider.issuer,
      scopes: [
        { scope: 'openid', description: 'Know who you are at Profiles' },
        { scope: 'profile', description: 'Read your profile' },
      ],
      protected_resources: [userinfo],
    });
    expect(put.status, put.text).toBe(200);
    identitySet = await adminCreated(admin, '/api/permission-sets', {
      name: 'Know who you are',
      service_scopes: [{ service_id: serviceId, scopes: ['openid'] }],
    });
    profileSet = await adminCreated(admin, '/api/permission-sets', {
      name: 'Read your profile',
      service_scopes: [{ service_id: serviceId, scopes: ['profile'] }],
    });
    agentId = await adminCreated(admin, '/api/agents', {
      display_name: 'Profile Assistant',
      permission_sets: [
        { permission_set_id: identitySet, requirement_type: 'optional' },
        { permission_set_id: profileSet, requirement_type: 'optional' },
      ],
    });

    gateway = new GatewayProcess([
      '--port',
      String(gatewayPort),
      '--url',
      mcpUrl,
      '--broker',
      base,
      '--key',
      join(keyDir, 'key.json'),
      '--resource',
      userinfo,
      '--service-name',
      SERVICE,
      '--scope',
      'openid profile',
    ]);
    await gateway.listening();
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await gateway?.stop();
    await browser?.close().catch(() => undefined);
    await broker?.stop();
    await provider?.stop();
    if (keyDir !== undefined) rmSync(keyDir, { recursive: true, force: true });
  });

  /** The person's token through the agent, for the MCP server (what the sign-in in front of the gateway issues). */
  async function personToken(principal: string): Promise<string> {
    const token = await new SignJWT({ sub: principal, azp: agentId })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setIssuer(gatewayOrigin)
      .setAudience(mcpUrl)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
    tokens.push(token);
    return token;
  }

  async function connectClient(principal: string): Promise<ElicitingClient> {
    const client = new Client(
      { name: 'authorization-at-need', version: '1.0.0' },
      { capabilities: { elicitation: { url: {} } } },
    );
    const completed: string[] = [];
    const waiting = new Map<string, () => void>();
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
      completed.push(notification.params.elicitationId);
      waiting.get(notification.params.elicitationId)?.();
    });
    const token = await personToken(principal);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcpUrl), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
        // Not the global fetch: the tests' contract check reads each answer to its end, which the session's
        // event stream (where the completion notification comes) never reaches.
        fetch: streamingFetch,
      }),
    );
    clients.push(client);
    return {
      client,
      completed,
      completion: (id) =>
        completed.includes(id) ? Promise.resolve() : new Promise((resolve) => waiting.set(id, resolve)),
      profile: async () => (await client.callTool({ name: 'profile', arguments: {} })) as CallToolResult,
    };
  }

  /** The tool call is answered with -32042: one URL-mode elicitation naming the broker's page for a new request. */
  async function elicitation(
    person: ElicitingClient,
  ): Promise<{ elicitationId: string; url: string; message: string }> {
    const refusal = await person.profile().then(
      (result) => result,
      (error: unknown) => error,
    );
    expect(refusal, JSON.stringify(refusal)).toBeInstanceOf(UrlElicitationRequiredError);
    const { elicitations } = refusal as UrlElicitationRequiredError;
    expect(elicitations).toHaveLength(1);
    const [only] = elicitations as [{ mode: string; elicitationId: string; url: string; message: string }];
    expect(only.mode).toBe('url');
    expect(only.elicitationId).toMatch(UUID);
    expect(only.url).toBe(`${base}/authorization-requests/${only.elicitationId}`);
    expect(only.message).toContain(SERVICE);
    return only;
  }

  /** The person connects at the provider beforehand (connections page flow, without a browser). */
  async function connectAccount(principal: string): Promise<void> {
    const person = new ApiClient(base, principal);
    const start = await person.get(
      `/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${base}/connections`)}`,
    );
    expect(start.status, start.text).toBe(302);
    const callback = await completeAuthorization(
      start.headers.location as string,
      `${base}/api/third-party/${serviceId}/oauth2/callback`,
    );
    const finish = await http(callback, { headers: { 'x-remote-user': principal } });
    expect(finish.headers.location).toContain('success=true');
  }

  /** The person allows the agent what `sets` name for the service (the consent API). */
  async function allow(principal: string, sets: string[]): Promise<void> {
    const granted = await new ApiClient(base, principal).post(`/api/consent/agents/${agentId}/grants`, {
      granted_permission_sets: Object.fromEntries(sets.map((set) => [set, [serviceId]])),
    });
    expect(granted.status, granted.text).toBe(201);
  }

  /** Signs in and consents on oidc-provider's interaction pages until the browser is back at the broker. */
  async function signInAtProvider(page: Page): Promise<void> {
    const origin = new URL(provider.issuer).origin;
    await page.waitForURL((url) => url.origin === origin);
    for (let step = 0; step < 4 && new URL(page.url()).origin === origin; step++) {
      const login = page.locator('input[name="login"]');
      if ((await login.count()) > 0) {
        await login.fill('provider-user');
        await page.locator('input[name="password"]').fill('any');
      }
      const before = page.url();
      await page.locator('button[type="submit"]').first().click();
      await page.waitForURL((url) => url.toString() !== before);
      await page.waitForLoadState();
    }
    await page.waitForURL((url) => url.origin === base);
  }

  /**
   * The person opens the link and does what the page asks until it says Done: Allow when asked, Connect when asked
   * (signing in at the provider). Returns the steps taken, in order.
   */
  async function allowOnThePage(principal: string, url: string): Promise<string[]> {
    const recorded = await openConsolePage(browser, { broker: base, principal });
    const { page } = recorded;
    const steps: string[] = [];
    try {
      await page.goto(url);
      const allowButton = page.getByRole('button', { name: /^allow/i });
      // "Connect Profiles" (or "… again"), not the navigation's "Connections".
      const connectName = new RegExp(`^Connect ${SERVICE}`);
      const connect = page.getByRole('button', { name: connectName }).or(page.getByRole('link', { name: connectName }));
      const done = page.getByRole('heading', { name: 'Done — you can return to Profile Assistant' });
      for (let step = 0; step < 4; step++) {
        await allowButton.or(connect).or(done).first().waitFor();
        if (await done.isVisible()) break;
        if (await allowButton.isVisible()) {
          steps.push('allow');
          await allowButton.click();
          await connect.or(done).first().waitFor();
        } else {
          steps.push('connect');
          await connect.first().click();
          await signInAtProvider(page);
        }
      }
      await done.waitFor();
      expect(recorded.pageErrors).toEqual([]);
      return steps;
    } finally {
      await recorded.close();
    }
  }

  /** The whole flow for one person: elicitation, the page until Done, the notification, the retry's profile. */
  async function toolCallAfterAllowing(principal: string): Promise<string[]> {
    const person = await connectClient(principal);
    const { elicitationId, url } = await elicitation(person);
    // The same call again before the person answers: the same request (the broker answers one per need).
    const again = await person.profile().catch((error: unknown) => error);
    expect((again as UrlElicitationRequiredError).elicitations?.[0]?.elicitationId).toBe(elicitationId);
    expect(person.completed).toEqual([]);

    const completion = person.completion(elicitationId);
    const steps = await allowOnThePage(principal, url);
    await completion;
    expect(person.completed).toEqual([elicitationId]);

    const retried = await person.profile();
    expect(retried.isError).toBeFalsy();
    expect(retried.content).toEqual([{ type: 'text', text: `Your profile at ${SERVICE}: {"sub":"provider-user"}` }]);
    return steps;
  }

  it('missing grant and connection: Allow, Connect at the provider, Done; the retried call reads the profile', async () => {
    const steps = await toolCallAfterAllowing('ana@example.com');
    expect(steps).toEqual(['allow', 'connect']);
  });

  it('missing grant only (the account is connected): Allow, Done; the retried call reads the profile', async () => {
    await connectAccount('ben@example.com');
    const steps = await toolCallAfterAllowing('ben@example.com');
    expect(steps).toEqual(['allow']);
  });

  it('missing connection only (the agent is allowed): Connect, Done; the retried call reads the profile', async () => {
    await allow('cai@example.com', [identitySet, profileSet]);
    const steps = await toolCallAfterAllowing('cai@example.com');
    expect(steps).toContain('connect');
    expect(steps.at(-1)).toBe('connect');
  });

  it('a grant lacking a requested scope: Allow extends it, Done; the retried call reads the profile', async () => {
    await connectAccount('dee@example.com');
    await allow('dee@example.com', [identitySet]);
    const steps = await toolCallAfterAllowing('dee@example.com');
    expect(steps).toEqual(['allow']);
    const grant = await new ApiClient(base, 'dee@example.com').get(`/api/consent/agents/${agentId}/grants`);
    expect(grant.text).toContain(profileSet);
  });

  it('Deny: no completion notification, and the next call tells the client in words that the person denied it', async () => {
    const person = await connectClient('eve@example.com');
    const { elicitationId, url } = await elicitation(person);
    const recorded = await openConsolePage(browser, { broker: base, principal: 'eve@example.com' });
    try {
      await recorded.page.goto(url);
      await recorded.page.getByRole('button', { name: /^deny/i }).click();
      // Deny is confirmed first.
      await recorded.page.getByRole('dialog').getByRole('button', { name: /^deny/i }).click();
      await recorded.page.getByRole('heading', { name: `You denied Profile Assistant access to ${SERVICE}` }).waitFor();
    } finally {
      await recorded.close();
    }
    const next = await person.profile();
    expect(next.isError).toBe(true);
    expect(next.content).toEqual([
      { type: 'text', text: expect.stringContaining(`You denied access to ${SERVICE}`) as string },
    ]);
    expect(person.completed).not.toContain(elicitationId);
    // Asked once more, the person gets a new link.
    const renewed = await elicitation(person);
    expect(renewed.elicitationId).not.toBe(elicitationId);
  });

  it('examples/mcp/elicitation-client.mjs prints the link, opens nothing, and retries once the server says it is done', async () => {
    await connectAccount('fay@example.com');
    const token = await personToken('fay@example.com');
    const child = spawn(
      process.execPath,
      ['examples/mcp/elicitation-client.mjs', '--server', mcpUrl, '--token', token],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let printed = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
    const exited = once(child, 'exit') as Promise<[number | null]>;
    try {
      const link = new RegExp(`^ {2}(${base}/authorization-requests/[0-9a-f-]{36})$`, 'm');
      while (!link.test(printed) && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
      const url = link.exec(printed)?.[1];
      expect(url, printed).toBeDefined();
      expect(printed).toContain(`(opens a page on 127.0.0.1:${new URL(base).port}; open it yourself if you agree)`);
      expect(await allowOnThePage('fay@example.com', url as string)).toEqual(['allow']);
      const [code] = await exited;
      expect(code, printed).toBe(0);
      expect(printed).toContain('the server says it is done: calling again');
      expect(printed).toContain(`Your profile at ${SERVICE}: {"sub":"provider-user"}`);
      expect(printed).not.toContain(token);
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
    }
  });

  it('never prints a token', () => {
    const printed = gateway.output.join('');
    expect(printed).toContain('elicited authorization request');
    for (const token of tokens) expect(printed).not.toContain(token);
    expect(printed).not.toMatch(/eyJ[\w-]+\.eyJ/);
  });
});
