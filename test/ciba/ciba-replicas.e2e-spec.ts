import { randomUUID } from 'node:crypto';
import {
  ApiClient,
  BrokerProcess,
  createPostgresDatabase,
  postgresServerUrl,
  startJwtIssuer,
  testKey,
  writeConfigFile,
  type TestJwtIssuer,
} from '@broker/testing';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CibaClient,
  cibaAgent,
  gatewayAuth,
  outcome,
  paymentDetail,
  pendingApprovalId,
  type PollAnswer,
} from '../support/ciba-client';

const ALICE = 'alice@example.com';
/** The broker's public URL as both replicas are configured: the issuer and the gateway assertions' audience. */
const PUBLIC_URL = 'http://broker.ciba-replicas.test';
/** The MCP server the requests are for (registered, never reached). */
const MCP = 'https://payments.ciba-replicas.test/mcp';
const INTERVAL_MS = 1_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Two broker processes on one PostgreSQL: a CIBA request made on one replica is decided and
 * polled through the other. The request, its poll interval and its single use live in the
 * database, one atomic statement per poll (docs/ciba.md).
 */
describe.runIf(postgresServerUrl())('CIBA across broker processes on one PostgreSQL', () => {
  let issuer: TestJwtIssuer;
  const replicas: BrokerProcess[] = [];
  const urls: Record<string, string>[] = [];
  let agent: { id: string; secret: string };
  /** The agent's client on replica A and on replica B (its client secret). */
  let onA: CibaClient;
  let onB: CibaClient;
  /** Every auth_req_id and access token handed out here, and the agent's secret: none may reach a log. */
  const secrets: string[] = [];

  beforeAll(async () => {
    issuer = await startJwtIssuer('ES256');
    const { file } = writeConfigFile({
      server: { enduser: { port: 0, public_url: PUBLIC_URL }, admin: { port: 0 }, shutdown: { timeout: '30s' } },
      storage: { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } },
      encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
      third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
      token_exchange: { client_assertion: { issuer_uri: issuer.issuer, jwks_uri: issuer.jwksUri } },
      oauth2_authorization_server: { ciba: { enabled: true, interval: `${INTERVAL_MS / 1000}s` } },
      approvals: { rate_limit: { max_requests_per_minute: 1_000 } },
    });
    for (let i = 0; i < 2; i += 1) {
      const replica = new BrokerProcess('broker', ['--config', file]);
      replicas.push(replica);
      urls.push(await replica.listening(['enduser', 'admin']));
    }
    const [a, b] = urls as [Record<string, string>, Record<string, string>];
    agent = await cibaAgent(
      { admin: a.admin as string, enduser: a.enduser as string },
      { resourceUri: MCP, displayName: 'Payments Agent', principals: [ALICE] },
    );
    secrets.push(agent.secret);
    onA = await CibaClient.discover(PUBLIC_URL, agent.id, oauth.ClientSecretBasic(agent.secret), a.enduser);
    onB = onA.with(oauth.ClientSecretBasic(agent.secret), b.enduser);
  });

  afterAll(async () => {
    for (const replica of replicas) {
      replica.signal('SIGTERM');
      await replica.exited;
    }
    await issuer?.stop();
  });

  const enduser = (replica: number): string => urls[replica]?.enduser as string;
  const assertion = () => issuer.sign({ sub: 'gateway', jti: randomUUID() }, { audience: PUBLIC_URL });

  /** The agent (through `client`) asks Alice about a payment; its auth_req_id and binding message. */
  async function ask(client: CibaClient, amount: number): Promise<{ authReqId: string; message: string }> {
    const message = `Payment ${randomUUID().slice(0, 8)}`;
    const answer = await client.ask(ALICE, paymentDetail(MCP, { to: 'acme@example.com', amount_eur: amount }), {
      binding_message: message,
    });
    secrets.push(answer.auth_req_id);
    return { authReqId: answer.auth_req_id, message };
  }

  /** Alice approves (once) through `replica`'s end-user API, as the console does. */
  async function approveOn(replica: number, message: string): Promise<void> {
    const id = await pendingApprovalId(enduser(replica), ALICE, message);
    const approved = await new ApiClient(enduser(replica), ALICE).post(`/api/approvals/${id}/approve`, {
      persistence: 'once',
    });
    expect(approved.status, approved.text).toBe(200);
  }

  it('a request made on A, approved through B, is polled on A: pending, then the token for exactly that call', async () => {
    const { authReqId, message } = await ask(onA, 120);
    expect(outcome(await onA.poll(authReqId))).toBe('authorization_pending');
    // B knows the request: it is in Alice's pending list there.
    await approveOn(1, message);
    await sleep(INTERVAL_MS);
    const answer = await onA.poll(authReqId);
    expect(answer.kind, JSON.stringify(answer)).toBe('token');
    expect((answer as Extract<PollAnswer, { kind: 'token' }>).token.authorization_details).toEqual([
      paymentDetail(MCP, { to: 'acme@example.com', amount_eur: 120 }),
    ]);
    await sleep(INTERVAL_MS);
    // Spent on A: B refuses it too.
    expect(await onB.poll(authReqId)).toMatchObject({ kind: 'error', error: 'invalid_grant' });
  });

  it('enforces the poll interval across replicas: a poll on B right after one on A is slow_down', async () => {
    const { authReqId } = await ask(onA, 7);
    expect(outcome(await onA.poll(authReqId))).toBe('authorization_pending');
    expect(outcome(await onB.poll(authReqId))).toBe('slow_down');
  });

  it('issues the token once when A and B are polled at the same moment after the approval', async () => {
    const { authReqId, message } = await ask(onB, 33);
    await approveOn(0, message);
    await sleep(INTERVAL_MS);
    const answers = await Promise.all([onA.poll(authReqId), onB.poll(authReqId)]);
    expect(answers.filter((answer) => answer.kind === 'token')).toHaveLength(1);
    // The other lost the race: the request is spent, or the winner's poll was its last one.
    const loser = answers.find((answer) => answer.kind === 'error');
    expect(['invalid_grant', 'slow_down']).toContain(outcome(loser as PollAnswer));
    // Past any grown interval (CIBA §11: + 5 s), every poll anywhere is refused as spent.
    await sleep(INTERVAL_MS + 5_000);
    expect(outcome(await onA.poll(authReqId))).toBe('invalid_grant');
    expect(outcome(await onB.poll(authReqId))).toBe('invalid_grant');
  });

  it("a gateway's request (its assertion, client_id the agent) is polled by the gateway on either replica, never with the agent's secret", async () => {
    const gatewayOnA = onA.with(gatewayAuth(assertion), enduser(0));
    const gatewayOnB = onA.with(gatewayAuth(assertion), enduser(1));
    const { authReqId, message } = await ask(gatewayOnA, 64);
    expect(outcome(await gatewayOnB.poll(authReqId))).toBe('authorization_pending');
    await sleep(INTERVAL_MS);
    // The agent's own credentials are another requester: the request is not theirs to poll.
    expect(outcome(await onA.poll(authReqId))).toBe('invalid_grant');
    await approveOn(1, message);
    await sleep(INTERVAL_MS);
    const answer = await gatewayOnA.poll(authReqId);
    expect(answer.kind, JSON.stringify(answer)).toBe('token');
  });

  it('neither replica logs an auth_req_id, an access token or the client secret', async () => {
    const { authReqId, message } = await ask(onA, 5);
    await approveOn(1, message);
    await sleep(INTERVAL_MS);
    const answer = await onB.poll(authReqId);
    expect(answer.kind, JSON.stringify(answer)).toBe('token');
    secrets.push((answer as Extract<PollAnswer, { kind: 'token' }>).token.access_token);
    for (const replica of replicas) {
      const log = replica.stdout.join('\n');
      // The request lines are there (the check below searches real output)...
      expect(log).toContain('/oauth2/token');
      // ...and no secret is.
      expect(secrets.filter((secret) => log.includes(secret))).toEqual([]);
    }
  });
});
