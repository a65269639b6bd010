import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ApiClient, completeAuthorization, freePort, http } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** `npm run demo`'s entry (after the build `npm test` runs first), as a child process. */
class DemoProcess {
  readonly output: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;

  constructor(args: string[]) {
    this.child = spawn(process.execPath, ['scripts/demo.mjs', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.output.push(chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.output.push(chunk));
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Waits until the printed text matches `pattern` (fails if the demo exits first). */
  async waitFor(pattern: RegExp, timeoutMs = 90_000): Promise<RegExpExecArray> {
    let exited = false;
    void this.exited.then(() => {
      exited = true;
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.output.join(''));
      if (match) return match;
      if (exited) throw new Error(`the demo exited before printing ${String(pattern)}:\n${this.output.join('')}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(pattern)}:\n${this.output.join('')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

async function postForm(url: string, fields: Record<string, string>) {
  return http(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

describe('npm run demo', () => {
  let demo: DemoProcess;
  let ports: { enduser: number; admin: number; adminConsole: number; provider: number; agent: number };
  let broker: string;
  let admin: ApiClient;
  let authorizeUrl: string;

  beforeAll(async () => {
    ports = {
      enduser: await freePort(),
      admin: await freePort(),
      adminConsole: await freePort(),
      provider: await freePort(),
      agent: await freePort(),
    };
    broker = `http://localhost:${ports.enduser}`;
    admin = new ApiClient(`http://localhost:${ports.admin}`);
    demo = new DemoProcess([
      '--enduser-port',
      String(ports.enduser),
      '--admin-port',
      String(ports.admin),
      '--admin-console-port',
      String(ports.adminConsole),
      '--provider-port',
      String(ports.provider),
      '--agent-port',
      String(ports.agent),
    ]);
    authorizeUrl = (await demo.waitFor(/^ {3}(http:\/\/localhost:\d+\/oauth2\/authorize\?\S+)$/m))[1] as string;
  }, 120_000);

  afterAll(async () => {
    // Already stopped by the last test unless it failed early.
    demo.signal('SIGINT');
    await demo.exited;
  });

  it('prints the consent console with the development principal, an authorization request and a token exchange', () => {
    const text = demo.output.join('');
    expect(text).toContain(`Consent console     ${broker}/agents`);
    expect(text).toContain('Signed in as        demo@example.com');
    expect(text).toContain(`curl -s ${broker}/oauth2/token`);
    expect(text).toContain(`-d grant_type=${EXCHANGE}`);
    expect(text).not.toContain('oidc-provider WARNING');
  });

  it('registers the demo agent, service and permission set through the admin API', async () => {
    const agents = (await admin.get('/api/agents')).json<
      { id: string; display_name: string; redirect_uris: string[]; permission_sets: { permission_set_id: string }[] }[]
    >();
    const services = (await admin.get('/api/services')).json<
      { id: string; display_name: string; issuer_uri: string; protected_resources: string[] }[]
    >();
    const sets = (await admin.get('/api/permission-sets')).json<{
      items: { id: string; name: string; service_scopes: { service_id: string; scopes: string[] }[] }[];
    }>().items;
    expect(agents.map((a) => a.display_name)).toEqual(['Demo Assistant']);
    expect(services.map((s) => s.display_name)).toEqual(['Demo Drive']);
    expect(sets.map((s) => s.name)).toEqual(['Read Demo Drive']);
    expect(agents[0]?.redirect_uris).toEqual([`http://localhost:${ports.agent}/callback`]);
    expect(agents[0]?.permission_sets.map((p) => p.permission_set_id)).toEqual([sets[0]?.id]);
    expect(sets[0]?.service_scopes).toEqual([
      expect.objectContaining({ service_id: services[0]?.id, scopes: ['files.read'] }),
    ]);
    expect(services[0]?.issuer_uri).toBe(`http://127.0.0.1:${ports.provider}`);
    expect(new URL(authorizeUrl).searchParams.get('client_id')).toBe(agents[0]?.id);
  });

  it('asks nothing for the agent before the person allows it: its page says to allow it first', async () => {
    const early = await http(`http://localhost:${ports.agent}/approvals`, { method: 'POST' });
    expect(early.status, early.text).toBe(200);
    expect(early.text).toContain('not asked: allow the Demo Assistant first (steps 1 and 2)');
    expect((await http(`${broker}/api/approvals/pending`)).json<{ data: unknown[] }>().data).toEqual([]);
  });

  it('runs consent → connect → exchange as the printed steps say', async () => {
    const agent = new URL(authorizeUrl).searchParams.get('client_id') as string;
    const service = (await admin.get('/api/services')).json<{ id: string }[]>()[0]?.id as string;
    const set = (await admin.get('/api/permission-sets')).json<{ items: { id: string }[] }>().items[0]?.id as string;

    // The printed authorize URL (no principal header: the development principal) lands on the consent page.
    const authorize = await http(authorizeUrl);
    expect(authorize.status, authorize.text).toBe(302);
    const consent = new URL(authorize.headers.location as string);
    expect(`${consent.origin}${consent.pathname}`).toBe(`${broker}/agents/${agent}`);
    const sessionToken = consent.searchParams.get('session_token') as string;
    expect(sessionToken).toBeTruthy();
    const page = await http(consent.toString());
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);

    // The gateway's exchange before anything is granted: the printed command's answer is a refusal.
    const gateway = `http://localhost:${ports.agent}/gateway`;
    const exchange = async () =>
      postForm(`${broker}/oauth2/token`, {
        grant_type: EXCHANGE,
        subject_token_type: ACCESS,
        subject_token: (await http(`${gateway}/subject-token`)).text,
        client_assertion_type: JWT_BEARER,
        client_assertion: (await http(`${gateway}/client-assertion`)).text,
        resource: 'https://api.demo-drive.example/v1',
      });
    expect((await exchange()).json<{ error: string }>().error).toBe('access_denied');

    // Connect Demo Drive from the consent page, through the sample provider's login and consent.
    const connect = await http(
      `${broker}/api/third-party/${service}/oauth2/authorize?redirect_uri=${encodeURIComponent(consent.toString())}`,
    );
    expect(connect.status, connect.text).toBe(302);
    const callback = await completeAuthorization(
      connect.headers.location as string,
      `${broker}/api/third-party/${service}/oauth2/callback`,
      'newcomer',
    );
    const connected = await http(callback);
    expect(connected.status).toBe(302);
    expect(new URL(connected.headers.location as string).searchParams.get('success')).toBe('true');

    // Allow: the browser ends on the agent's page with the code and the next commands.
    const grant = await http(
      `${broker}/api/consent/agents/${agent}/grants?session_token=${encodeURIComponent(sessionToken)}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ granted_permission_sets: { [set]: [service] }, valid_until: null }),
      },
    );
    expect(grant.status, grant.text).toBeLessThan(300);
    // The browser follows redirect_url: the authorization request again, now answered with the code.
    const resumed = await http(grant.json<{ redirect_url: string }>().redirect_url);
    expect(resumed.status, resumed.text).toBe(302);
    const redirect = new URL(resumed.headers.location as string);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(`http://localhost:${ports.agent}/callback`);
    const code = redirect.searchParams.get('code') as string;
    const agentPage = await http(redirect.toString());
    expect(agentPage.text).toContain('access granted');
    expect(agentPage.text).toContain('state matches');
    const verifier = /code_verifier=([\w-]+)/.exec(agentPage.text)?.[1] as string;

    // The agent redeems the code (public client, PKCE), as the page says.
    const token = await postForm(`${broker}/oauth2/token`, {
      grant_type: 'authorization_code',
      client_id: agent,
      code,
      code_verifier: verifier,
      redirect_uri: `http://localhost:${ports.agent}/callback`,
    });
    expect(token.status, token.text).toBe(200);
    expect(token.json<{ access_token: string }>().access_token).toBeTruthy();

    // The gateway's exchange now returns the person's Demo Drive token.
    const exchanged = await exchange();
    expect(exchanged.status, exchanged.text).toBe(200);
    const body = exchanged.json<{ access_token: string; issued_token_type: string }>();
    expect(body.issued_token_type).toBe(ACCESS);
    expect(body.access_token.length).toBeGreaterThan(10);
  }, 120_000);

  it('prints the admin console, which opens signed in as the demo administrator through its stand-in SSO proxy', async () => {
    const adminConsole = `http://localhost:${ports.adminConsole}/`;
    expect(demo.output.join('')).toContain(`Admin console       ${adminConsole} (a stand-in SSO proxy signs you in`);
    const page = await http(adminConsole);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<div id="root"></div>');
    expect(String(page.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    const me = await http(`${adminConsole}api/me`, { headers: { 'x-remote-user': 'someone-else@example.com' } });
    expect(me.json()).toEqual({ principal: 'demo-admin@example.com', role: 'admin' });
  });

  it("puts two tool calls on the Approvals page from the demo agent's button (its gateway asking, once the agent is allowed), one of them critical", async () => {
    const text = demo.output.join('');
    expect(text).toContain(`curl -s -X POST http://localhost:${ports.agent}/approvals`);
    // Every address printed for a browser opens a page: the admin API (401 without the principal header) is a curl.
    expect(text).not.toMatch(/Admin API +http/);
    expect(text).toContain(
      `curl -H 'X-Remote-User: demo-admin@example.com' http://localhost:${ports.admin}/api/agents`,
    );
    const agentPage = await http(`http://localhost:${ports.agent}/`);
    expect(agentPage.text).toContain('<form method="post" action="/approvals">');
    expect(agentPage.text).toContain('Make two tool calls');

    const asked = await http(`http://localhost:${ports.agent}/approvals`, { method: 'POST' });
    expect(asked.status, asked.text).toBe(303);
    expect(asked.headers.location).toBe(`${broker}/approvals`);
    // The development principal is the person: the pending list is theirs, with the gateway's words for each call.
    const pending = (await http(`${broker}/api/approvals/pending`)).json<{
      data: { tool_name: string; risk_level: string | null; status: string; metadata: Record<string, unknown> }[];
    }>().data;
    expect(pending.map((a) => [a.tool_name, a.risk_level, a.status])).toEqual([
      ['drive.share_file', 'medium', 'pending'],
      ['drive.delete_folder', 'critical', 'pending'],
    ]);
    expect(pending[0]?.metadata).toMatchObject({
      tool_title: 'Share a file',
      reason: 'You asked me to send the Q3 report to Bob.',
    });
    // A GET (a link followed, a prefetch) asks nothing.
    expect((await http(`http://localhost:${ports.agent}/approvals`)).status).toBe(405);
    expect((await http(`${broker}/api/approvals/pending`)).json<{ data: unknown[] }>().data).toHaveLength(2);
  });

  it('a decision remembered settles the next call, as a real gateway reads the sync state: "Always" lets it through, an always-deny refuses it, no new request', async () => {
    const pending = (await http(`${broker}/api/approvals/pending`)).json<{
      data: { id: string; tool_name: string }[];
    }>().data;
    const share = pending.find((a) => a.tool_name === 'drive.share_file')?.id as string;
    const remove = pending.find((a) => a.tool_name === 'drive.delete_folder')?.id as string;
    // Always, for any file in /reports (the other arguments may be anything); the folder deletion denied always.
    const approved = await http(`${broker}/api/approvals/${share}/approve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ persistence: 'permanent', params_pattern: { path: '/reports/*' } }),
    });
    expect(approved.status, approved.text).toBe(200);
    const denied = await http(`${broker}/api/approvals/${remove}/deny`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ persistence: 'permanent' }),
    });
    expect(denied.status, denied.text).toBe(200);

    // The agent makes the same two calls again: its gateway settles both from the sync state and asks nothing.
    const again = await http(`http://localhost:${ports.agent}/approvals`, { method: 'POST' });
    expect(again.status, again.text).toBe(200);
    expect(again.text).toMatch(/Share a file<\/strong> \(<code>drive\.share_file<\/code>\): went through/);
    expect(again.text).toMatch(/Delete a folder<\/strong> \(<code>drive\.delete_folder<\/code>\): refused/);
    expect((await http(`${broker}/api/approvals/pending`)).json<{ data: unknown[] }>().data).toEqual([]);
    // Still the two remembered decisions, and nothing else: no request was made for either call.
    const remembered = (await http(`${broker}/api/approvals/permanent`)).json<{
      data: { id: string; status: string }[];
    }>().data;
    expect(remembered.map((a) => [a.id, a.status]).sort()).toEqual(
      [
        [share, 'approved'],
        [remove, 'denied'],
      ].sort(),
    );
    await demo.waitFor(/gateway: drive\.share_file: went through/);
    await demo.waitFor(/gateway: drive\.delete_folder: refused/);

    // Once the person revokes "Always", the next call asks again: what decides is the sync state, not a cache.
    const revoked = await http(`${broker}/api/approvals/${share}/revoke`, { method: 'POST' });
    expect(revoked.status, revoked.text).toBe(200);
    const third = await http(`http://localhost:${ports.agent}/approvals`, { method: 'POST' });
    expect(third.status, third.text).toBe(303);
    const waiting = (await http(`${broker}/api/approvals/pending`)).json<{
      data: { id: string; tool_name: string }[];
    }>().data;
    expect(waiting.map((a) => a.tool_name)).toEqual(['drive.share_file']);
    expect(waiting[0]?.id).not.toBe(share);
  });

  it('stops on Ctrl-C with exit 0 and deletes its data', async () => {
    const dataDir = (await demo.waitFor(/the data lives in (\S+) and is deleted/))[1] as string;
    expect(existsSync(dataDir)).toBe(true);
    demo.signal('SIGINT');
    expect((await demo.exited).code).toBe(0);
    expect(demo.output.join('')).toContain('demo stopped');
    expect(existsSync(dataDir)).toBe(false);
  }, 120_000);
});
