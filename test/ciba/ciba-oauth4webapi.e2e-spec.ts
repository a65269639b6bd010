import { randomUUID } from 'node:crypto';
import { freePort, http, type RecordedPage } from '@broker/testing';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CIBA_GRANT,
  CibaClient,
  cibaAgent,
  insecure,
  MCP_SCOPE,
  outcome,
  paymentDetail,
  pendingApprovalId,
  TOOL_CALL,
  type PollAnswer,
} from '../support/ciba-client';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from '../support/console-fixture';
import { startExampleMcpServer, type ExampleMcpServer } from '../support/example-mcp-server';

/** The poll interval the broker is configured with here (seconds). */
const INTERVAL = 1;

/**
 * OpenID CIBA Core 1.0 (poll mode) with RFC 9396 authorization_details, end to end: oauth4webapi
 * is the agent's client, the person decides in Chromium on the console's approval page, and the
 * example MCP server (examples/mcp/server.mjs) checks the token against the call it is about to
 * run (docs/ciba.md).
 */
describe('CIBA: oauth4webapi as the agent, the person in a browser, the example MCP server', () => {
  let fx: ConsoleFixture;
  let example: ExampleMcpServer;
  let exampleUrl: string;
  let agent: { id: string; secret: string };
  let ciba: CibaClient;
  /** Every auth_req_id, token and secret this file handled: none may reach the log. */
  const secrets: string[] = [];

  beforeAll(async () => {
    fx = await startConsoleFixture({
      config: {
        log: { level: 'info' },
        oauth2_authorization_server: { ciba: { enabled: true, interval: `${INTERVAL}s` } },
        // This file asks the one person more often than an agent normally would within a minute.
        approvals: { rate_limit: { max_requests_per_minute: 1_000 } },
      },
    });
    const port = await freePort();
    exampleUrl = `http://127.0.0.1:${port}/mcp`;
    agent = await cibaAgent(
      { admin: fx.admin.baseUrl, enduser: fx.base },
      { resourceUri: exampleUrl, displayName: 'Payments Agent', principals: [ALICE] },
    );
    secrets.push(agent.secret);
    example = await startExampleMcpServer({ port, broker: fx.base, url: exampleUrl });
    ciba = await CibaClient.discover(fx.base, agent.id, oauth.ClientSecretBasic(agent.secret));
  });

  afterAll(async () => {
    await example?.stop();
    await fx?.stop();
  });

  /**
   * The broker's clock (frozen in this fixture) catches up with the real one, which the example MCP
   * server and oauth4webapi's DPoP proofs (their `iat`) go by. It never runs ahead of it.
   */
  function catchUp(): void {
    fx.clock.set(new Date(Math.max(fx.clock.now().getTime(), Date.now())));
  }

  /** Time passes for the poll interval: at least `seconds` on the broker's clock, and as much in real time. */
  async function elapse(seconds: number): Promise<void> {
    const target = fx.clock.now().getTime() + seconds * 1000;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    fx.clock.set(new Date(Math.max(target, Date.now())));
  }

  /** The agent asks Alice about `args` with a binding message of its own; the auth_req_id and the message. */
  async function ask(
    args: Record<string, unknown>,
    extra: Record<string, string> = {},
  ): Promise<{ authReqId: string; message: string; answer: oauth.BackchannelAuthenticationResponse }> {
    const message = `Payment ${randomUUID().slice(0, 8)}`;
    const answer = await ciba.ask(ALICE, paymentDetail(exampleUrl, args), { binding_message: message, ...extra });
    secrets.push(answer.auth_req_id);
    return { authReqId: answer.auth_req_id, message, answer };
  }

  /** Polls, remembering any access token issued. */
  async function poll(authReqId: string, DPoP?: oauth.DPoPHandle): Promise<PollAnswer> {
    const answer = await ciba.poll(authReqId, DPoP);
    if (answer.kind === 'token') secrets.push(answer.token.access_token);
    return answer;
  }

  /** A JSON-RPC tools/call of send_payment with `args`, sent to the example MCP server with `token`. */
  async function callPayment(
    token: oauth.TokenEndpointResponse,
    args: Record<string, unknown>,
    DPoP?: oauth.DPoPHandle,
  ): Promise<Response> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'send_payment', arguments: args },
    });
    const headers = new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
    try {
      return await oauth.protectedResourceRequest(token.access_token, 'POST', new URL(exampleUrl), headers, body, {
        ...insecure,
        ...(DPoP === undefined ? {} : { DPoP }),
      });
    } catch (error) {
      // A refusal with a challenge: the assertions read the response.
      if (error instanceof oauth.WWWAuthenticateChallengeError) return error.response;
      throw error;
    }
  }

  /** Opens Alice's pending approval for the request with `message`, as the console shows it. */
  async function openApproval(message: string): Promise<RecordedPage> {
    const id = await pendingApprovalId(fx.base, ALICE, message);
    const recorded = await fx.open(`/approvals/${id}`, ALICE);
    await recorded.page.getByText(message).first().waitFor();
    return recorded;
  }

  it('publishes the CIBA and RFC 9396 members of its metadata (poll mode only)', () => {
    expect(ciba.as).toMatchObject({
      backchannel_authentication_endpoint: `${fx.base}/oauth2/bc-authorize`,
      backchannel_token_delivery_modes_supported: ['poll'],
      backchannel_user_code_parameter_supported: false,
      authorization_details_types_supported: [TOOL_CALL],
    });
    expect(ciba.as.grant_types_supported).toContain(CIBA_GRANT);
  });

  it('the person approves the call in the browser after checking the binding message; the DPoP-bound token says exactly that call, the example MCP server runs it and refuses another, and the auth_req_id is spent', async () => {
    const args = { to: 'acme@example.com', amount_eur: 120 };
    const { authReqId, message, answer } = await ask(args);
    expect(answer.expires_in).toBeGreaterThan(0);
    expect(answer.interval).toBe(INTERVAL);
    expect(authReqId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const DPoP = oauth.DPoP(ciba.client, await oauth.generateKeyPair('ES256'));
    catchUp();
    // CIBA §11: the person has not decided yet.
    expect(outcome(await poll(authReqId, DPoP))).toBe('authorization_pending');

    // The person, on the console: the request is in the pending list, opened from there.
    const list = await fx.open('/approvals', ALICE);
    const review = list.page.getByRole('link', { name: /^Review .* from Payments Agent$/ });
    await review.first().waitFor({ timeout: 15_000 });
    await review.first().click();
    const p = list.page;
    await p.waitForURL((url) => /^\/approvals\/[0-9a-f-]{36}$/.test(url.pathname));
    const approvalId = new URL(p.url()).pathname.split('/').at(-1) as string;
    expect(approvalId).toBe(await pendingApprovalId(fx.base, ALICE, message));
    // The binding message is shown for the person to compare with what the agent shows (CIBA §7.1).
    await p.getByText(message).first().waitFor();
    const page = await p.locator('main').innerText();
    expect(page).toContain('Send a payment');
    expect(page).toContain('Pays an invoice from the company account');
    expect(page).toContain('acme@example.com');
    expect(page).toContain('Payments MCP');
    // A backchannel request has no agent session: "This agent session" is not offered.
    expect(await p.getByRole('radio', { name: /^Always/ }).count()).toBe(1);
    expect(await p.getByRole('radio', { name: /This agent session/ }).count()).toBe(0);
    await reviewPage(list, 'ciba-e2e-approval');
    await p.getByRole('radio', { name: /Only this call/ }).check();
    await p.getByRole('button', { name: 'Approve this call' }).click();
    await p
      .getByRole('status')
      .filter({ hasText: /approved/i })
      .first()
      .waitFor();
    await reviewPage(list, 'ciba-e2e-approved');
    expect(list.pageErrors).toEqual([]);

    await elapse(INTERVAL);
    const issued = await poll(authReqId, DPoP);
    expect(issued.kind, JSON.stringify(issued)).toBe('token');
    const token = (issued as Extract<PollAnswer, { kind: 'token' }>).token;
    // RFC 9396 §7: the token response names what was approved, exactly the requested entry.
    const approvedEntry = paymentDetail(exampleUrl, args);
    expect(token.authorization_details).toEqual([approvedEntry]);
    expect(token.token_type).toBe('dpop');
    expect(token.refresh_token).toBeUndefined();
    expect(token.id_token).toBeUndefined();
    const claims = decodeJwt(token.access_token);
    expect(claims).toMatchObject({
      iss: fx.base,
      sub: ALICE,
      client_id: agent.id,
      aud: exampleUrl,
      scope: MCP_SCOPE,
      authorization_details: [approvedEntry],
      cnf: { jkt: await DPoP.calculateThumbprint() },
    });
    expect((claims.exp as number) - (claims.iat as number)).toBeLessThanOrEqual(120);

    // RFC 9396 §9.1: introspection returns the authorization_details.
    const introspected = await http(`${fx.base}/oauth2/introspect`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${agent.id}:${agent.secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: token.access_token }).toString(),
    });
    expect(introspected.status, introspected.text).toBe(200);
    expect(introspected.json<Record<string, unknown>>()).toMatchObject({
      active: true,
      authorization_details: [approvedEntry],
    });

    // The example MCP server runs the call the token names...
    const ran = await callPayment(token, args, DPoP);
    expect(ran.status, await ran.clone().text()).toBe(200);
    const ranText = await ran.text();
    expect(ranText).toContain('acme@example.com');
    expect(ranText).not.toMatch(/"isError":\s*true/);
    // ...and refuses another: a different amount is not what the person approved.
    const other = await callPayment(token, { ...args, amount_eur: 9_999 }, DPoP);
    expect(other.status).toBe(403);
    expect(other.headers.get('www-authenticate') ?? '').toMatch(/insufficient_scope/);
    // ...and runs the approved call once: the same call again is refused.
    const again = await callPayment(token, args, DPoP);
    expect(again.status).toBe(403);

    // Single use: the auth_req_id has given its token.
    const replay = await poll(authReqId, DPoP);
    expect(replay).toMatchObject({ kind: 'error', error: 'invalid_grant', status: 400 });
    // The approvals API's consume is not the way to use a backchannel request.
    const consumed = await http(`${fx.base}/api/approvals/${approvalId}/consume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await fx.gateway.subjectToken(ALICE, agent.id)}` },
    });
    expect(consumed.status, consumed.text).toBe(422);
    expect(consumed.json<{ error: string }>().error).toBe('not_consumable');
  });

  it('the person denies the call in the browser: the next poll answers access_denied', async () => {
    const { authReqId, message } = await ask({ to: 'mallory@example.com', amount_eur: 5_000 });
    expect(outcome(await poll(authReqId))).toBe('authorization_pending');
    const recorded = await openApproval(message);
    const p = recorded.page;
    await p.getByRole('button', { name: 'Deny this call' }).click();
    await p
      .getByRole('status')
      .filter({ hasText: /denied/i })
      .first()
      .waitFor();
    await reviewPage(recorded, 'ciba-e2e-denied');
    await elapse(INTERVAL);
    expect(await poll(authReqId)).toMatchObject({ kind: 'error', error: 'access_denied', status: 400 });
    expect(recorded.pageErrors).toEqual([]);
  });

  it('"Always" with a pattern, chosen in the browser, answers a later request it covers at once (first poll: the token) and leaves one it does not cover pending', async () => {
    const first = await ask({ to: 'supplier@example.com', amount_eur: 40 });
    const recorded = await openApproval(first.message);
    const p = recorded.page;
    await p.getByRole('radio', { name: /^Always/ }).check();
    // The recipient exactly as reviewed, any amount.
    await p.getByLabel('amount_eur', { exact: true }).selectOption({ label: 'Any amount_eur' });
    const preview = p.getByRole('status').filter({ hasText: 'What this approval covers' });
    await expect.poll(() => preview.innerText(), { timeout: 10_000 }).toMatch(/amount_eur\s+any value/);
    await reviewPage(recorded, 'ciba-e2e-always');
    // A critical tool: "always" is confirmed a second time.
    await p.getByRole('button', { name: 'Approve always…' }).click();
    await p.getByRole('dialog').getByRole('button', { name: 'Yes, always allow' }).click();
    await p
      .getByRole('status')
      .filter({ hasText: /approved always/i })
      .waitFor();
    await elapse(INTERVAL);
    const firstToken = await poll(first.authReqId);
    expect(firstToken.kind, JSON.stringify(firstToken)).toBe('token');

    // Covered (same recipient, another amount): approved at request time, the first poll gives the token.
    const covered = await ask({ to: 'supplier@example.com', amount_eur: 75 });
    const at = await poll(covered.authReqId);
    expect(at.kind, JSON.stringify(at)).toBe('token');
    expect((at as Extract<PollAnswer, { kind: 'token' }>).token.authorization_details).toEqual([
      paymentDetail(exampleUrl, { to: 'supplier@example.com', amount_eur: 75 }),
    ]);
    // Not covered (another recipient): the person is asked.
    const uncovered = await ask({ to: 'someone-else@example.com', amount_eur: 75 });
    expect(outcome(await poll(uncovered.authReqId))).toBe('authorization_pending');
    await pendingApprovalId(fx.base, ALICE, uncovered.message);
    expect(recorded.pageErrors).toEqual([]);
  });

  it('"Always deny", chosen in the browser, answers the same request later with access_denied at once', async () => {
    const args = { to: 'casino@example.com', amount_eur: 500 };
    const first = await ask(args);
    const recorded = await openApproval(first.message);
    const p = recorded.page;
    await p.getByRole('checkbox', { name: /Always deny this call/ }).check();
    await p.getByRole('button', { name: 'Deny always' }).click();
    await p
      .getByRole('status')
      .filter({ hasText: /denied/i })
      .first()
      .waitFor();
    const again = await ask(args);
    expect(await poll(again.authReqId)).toMatchObject({ kind: 'error', error: 'access_denied' });
    expect(recorded.pageErrors).toEqual([]);
  });

  it('answers slow_down to a poll inside the interval, and the interval then grows by 5 s for that request (CIBA §11)', async () => {
    const { authReqId } = await ask({ to: 'acme@example.com', amount_eur: 1 });
    expect(outcome(await poll(authReqId))).toBe('authorization_pending');
    // At once again: too early.
    expect(await poll(authReqId)).toMatchObject({ kind: 'error', error: 'slow_down', status: 400 });
    // The old interval is no longer enough...
    await elapse(INTERVAL);
    expect(outcome(await poll(authReqId))).toBe('slow_down');
    // ...the grown one (interval + 5 s, twice grown now: + 10 s) is.
    await elapse(INTERVAL + 10);
    expect(outcome(await poll(authReqId))).toBe('authorization_pending');
  });

  it('past requested_expiry the poll answers expired_token and the approval page says the request expired', async () => {
    const { authReqId, message, answer } = await ask(
      { to: 'acme@example.com', amount_eur: 2 },
      { requested_expiry: '3' },
    );
    expect(answer.expires_in).toBe(3);
    const id = await pendingApprovalId(fx.base, ALICE, message);
    await elapse(4);
    expect(await poll(authReqId)).toMatchObject({ kind: 'error', error: 'expired_token', status: 400 });
    const recorded = await fx.open(`/approvals/${id}`, ALICE);
    await recorded.page
      .getByText(/expired/i)
      .first()
      .waitFor();
    await reviewPage(recorded, 'ciba-e2e-expired');
    expect(await recorded.page.getByRole('button', { name: 'Approve this call' }).count()).toBe(0);
  });

  it('an unknown auth_req_id, or another agent presenting this one, is invalid_grant', async () => {
    expect(await poll('A'.repeat(43))).toMatchObject({ kind: 'error', error: 'invalid_grant' });
    const { authReqId } = await ask({ to: 'acme@example.com', amount_eur: 3 });
    const other = await cibaAgent(
      { admin: fx.admin.baseUrl, enduser: fx.base },
      {
        resourceUri: `http://127.0.0.1:${await freePort()}/mcp`,
        displayName: 'Other Agent',
        principals: [ALICE],
      },
    );
    secrets.push(other.secret);
    const thief = await CibaClient.discover(fx.base, other.id, oauth.ClientSecretPost(other.secret));
    expect(await thief.poll(authReqId)).toMatchObject({ kind: 'error', error: 'invalid_grant' });
  });

  it('writes no auth_req_id, access token or client secret to the log', () => {
    expect(secrets.length).toBeGreaterThan(10);
    expect(fx.broker.logs.text).toContain('/oauth2/bc-authorize');
    expect(fx.broker.logs.leaked(secrets)).toEqual([]);
  });
});
