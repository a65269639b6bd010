import { loadConfig } from '@broker/config';
import { ApiClient, freePort, http, startTestBroker, type HttpsDocumentServer, type TestBroker } from '@broker/testing';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allowRequestedResources,
  CimdClientProvider,
  connectMcpClient,
  consentingBrowser,
  startClientMetadataDocument,
  type Consent,
} from '../support/mcp-client';
import { MCP_SCOPE, startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { startExampleMcpServer, type ExampleMcpServer } from '../support/example-mcp-server';
import { BOTH_SERVERS } from '../support/servers';

const ALICE = 'alice@example.com';
const CONSENT_UI = 'https://consent.example.com';
/** A desktop MCP client's loopback redirect URI (nothing listens: the test's browser stops at it). */
const REDIRECT = 'http://127.0.0.1:33418/callback';
const ELSEWHERE = 'https://elsewhere.example.com/mcp';

/**
 * The official MCP TypeScript SDK on both sides of the broker's local authorization server.
 * The client's identity is a Client ID Metadata Document served over HTTPS on loopback; two
 * SDK MCP servers, registered as protected resources, accept only broker tokens whose `aud`
 * names them, and the person consents to each by name (docs/admin-api.md "Protected resources (MCP servers)").
 */
describe('MCP clients: the official SDK against the local authorization server', () => {
  let docs: HttpsDocumentServer;
  let broker: TestBroker;
  let base: string;
  let clientId: string;
  let alice: ApiClient;
  let a: TestMcpServer;
  let b: TestMcpServer;
  let exampleUrl: string;
  /** The permission set bundling the example MCP server's scope. */
  let exampleSet = '';
  let tokenForA = '';
  let example: ExampleMcpServer | undefined;
  const consents: Consent[] = [];
  const clients: Client[] = [];

  /** The person in a browser (consent page, Allow for the requested MCP server keeping the grant, back to the client). */
  const browser = (url: URL): Promise<URL> =>
    consentingBrowser(alice, base, CONSENT_UI, allowRequestedResources, consents)(url);

  const provider = () => new CimdClientProvider(clientId, REDIRECT, browser, base);

  beforeAll(async () => {
    ({ docs, clientId } = await startClientMetadataDocument(REDIRECT));
    const [port, portA, portB, portExample] = [await freePort(), await freePort(), await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    exampleUrl = `http://127.0.0.1:${portExample}/mcp`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base, consent_ui_url: CONSENT_UI } },
        oauth2_authorization_server: {
          cimd: { enabled: true, allowed_networks: ['127.0.0.1/32'], tls_ca_file: docs.caFile },
          local: {
            resource_indicators: {
              allowed_resources: [`http://127.0.0.1:${portA}/mcp`, `http://127.0.0.1:${portB}/mcp`, exampleUrl],
            },
          },
        },
      },
    });
    a = await startMcpServer({ name: 'MCP A', issuer: base, port: portA });
    b = await startMcpServer({ name: 'MCP B', issuer: base, port: portB });
    alice = new ApiClient(base, ALICE);
    const admin = new ApiClient(broker.url('admin'));
    // Each MCP server registered as a protected resource, each in a permission set of its own.
    const sets: string[] = [];
    for (const [name, url] of [
      ['MCP A', a.url],
      ['MCP B', b.url],
      ['Example MCP', exampleUrl],
    ] as const) {
      const resource = await admin.post('/api/resources', {
        display_name: name,
        resource_uri: url,
        scopes: [{ scope: MCP_SCOPE, description: `Use the tools of ${name}` }],
      });
      expect(resource.status, resource.text).toBe(201);
      const set = await admin.post('/api/permission-sets', {
        name: `${name} tools`,
        resource_scopes: [{ resource_id: resource.json<{ id: string }>().id, scopes: [MCP_SCOPE] }],
      });
      expect(set.status, set.text).toBe(201);
      sets.push(set.json<{ id: string }>().id);
    }
    exampleSet = sets[2] as string;
    const agent = await admin.post('/api/agents', {
      display_name: 'Desktop MCP client',
      client_uris: [clientId],
      allowed_scopes: [MCP_SCOPE],
      permission_sets: sets.map((id) => ({ permission_set_id: id, requirement_type: 'optional' })),
    });
    expect(agent.status, agent.text).toBe(201);
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
    await example?.stop();
    await a?.stop();
    await b?.stop();
    await broker?.stop();
    await docs?.stop();
  });

  it('runs the MCP authorization flow (CIMD client id, PKCE, resource, consent with the session token) and calls a tool on A', async () => {
    const forA = provider();
    const client = await connectMcpClient(a.url, forA);
    clients.push(client);

    // One authorization request, as the MCP specification has it.
    expect(forA.authorizationUrls).toHaveLength(1);
    const request = forA.authorizationUrls[0] as URL;
    expect(`${request.origin}${request.pathname}`).toBe(`${base}/oauth2/authorize`);
    expect(Object.fromEntries(request.searchParams)).toMatchObject({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      code_challenge_method: 'S256',
      resource: a.url,
      scope: MCP_SCOPE,
    });
    // The person consented once, through the end-user API, for the document's agent.
    expect(consents).toHaveLength(1);
    expect(consents[0]?.detail.cimd).toMatchObject({
      client_id_url: clientId,
      redirect_uri: REDIRECT,
      requested_scopes: [MCP_SCOPE],
    });
    // The person sees which MCP server the agent will reach, by name.
    expect(consents[0]?.detail.authorization_context).toMatchObject({ resources: [a.url] });
    expect(consents[0]?.detail.resources).toEqual([
      expect.objectContaining({
        display_name: 'MCP A',
        resource_uri: a.url,
        granted: false,
        requested: true,
        permissions: [{ scope: MCP_SCOPE, description: 'Use the tools of MCP A' }],
      }),
      expect.objectContaining({ display_name: 'MCP B', resource_uri: b.url, granted: false, requested: false }),
      expect.objectContaining({
        display_name: 'Example MCP',
        resource_uri: exampleUrl,
        granted: false,
        requested: false,
      }),
    ]);

    const token = forA.tokens()?.access_token as string;
    tokenForA = token;
    expect(decodeJwt(token)).toMatchObject({ iss: base, aud: a.url, sub: ALICE, scope: MCP_SCOPE });

    const result = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: `MCP A: hello (for ${ALICE})` }]);
    expect(a.refusals).toEqual([]);
  });

  it('binds each token to its MCP server: a token obtained for B works on B and is refused by A (401)', async () => {
    const forB = provider();
    const client = await connectMcpClient(b.url, forB);
    clients.push(client);
    // The grant covers A only: the person consents to B, and to B alone (incremental consent).
    expect(consents).toHaveLength(2);
    expect(forB.authorizationUrls[0]?.searchParams.get('resource')).toBe(b.url);
    expect(
      (consents[1]?.detail.resources as { resource_uri: string; granted: boolean; requested: boolean }[]).map((r) => [
        r.resource_uri,
        r.granted,
        r.requested,
      ]),
    ).toEqual([
      [a.url, true, false],
      [b.url, false, true],
      [exampleUrl, false, false],
    ]);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(result.content).toEqual([{ type: 'text', text: `MCP B: hi (for ${ALICE})` }]);

    const tokenForB = forB.tokens()?.access_token as string;
    expect(decodeJwt(tokenForB).aud).toBe(b.url);
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'replay', version: '1' } },
    };
    const refused = await fetch(a.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokenForB}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(initialize),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(
      /^Bearer error="invalid_token".*resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    expect(a.refusals).toEqual(['ERR_JWT_CLAIM_VALIDATION_FAILED']);
    // The same request with B's token at B is accepted.
    const accepted = await fetch(b.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokenForB}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(initialize),
    });
    expect(accepted.status).toBe(200);
    await accepted.body?.cancel();
  });

  describe('a resource outside allowed_resources', () => {
    async function authorizeRequest(resource: string, verifier: string, state: string) {
      const url = new URL(`${base}/oauth2/authorize`);
      const params = {
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: MCP_SCOPE,
        state,
        resource,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      };
      for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
      return http(url.toString(), { headers: { 'x-remote-user': ALICE } });
    }
    const token = (form: Record<string, string>) =>
      http(`${base}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });

    it('is invalid_target on authorize, by redirect with the state', async () => {
      const response = await authorizeRequest(ELSEWHERE, oauth.generateRandomCodeVerifier(), 'st-1');
      expect(response.status).toBe(302);
      const location = new URL(response.headers.location as string);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      expect(location.searchParams.get('error')).toBe('invalid_target');
      expect(location.searchParams.get('state')).toBe('st-1');
      expect(location.searchParams.get('code')).toBeNull();
    });

    it('is invalid_target on token (and so is a configured resource the code was not issued for)', async () => {
      for (const resource of [ELSEWHERE, b.url]) {
        const verifier = oauth.generateRandomCodeVerifier();
        const issued = await authorizeRequest(a.url, verifier, 'st-2');
        const code = new URL(issued.headers.location as string).searchParams.get('code') as string;
        expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
        const response = await token({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
          client_id: clientId,
          resource,
        });
        expect(response.status, resource).toBe(400);
        expect(response.json<{ error: string }>().error).toBe('invalid_target');
        expect(response.headers['cache-control']).toBe('no-store');
      }
    });
  });

  describe('examples/mcp', () => {
    it('broker.yaml loads: development principal, CIMD and CIBA on, the example MCP server allowed', () => {
      const { config } = loadConfig(['--config', 'examples/mcp/broker.yaml'], {});
      expect(config.development.principal).toBe('alice@example.com');
      expect(config.oauth2_authorization_server.cimd.enabled).toBe(true);
      expect(config.oauth2_authorization_server.ciba.enabled).toBe(true);
      expect(config.oauth2_authorization_server.local.resource_indicators.allowed_resources).toEqual([
        'http://localhost:3001/mcp',
      ]);
    });

    /** `node examples/mcp/server.mjs` for exampleUrl, started once (by the first test here that needs it). */
    async function startExample(): Promise<void> {
      if (example !== undefined) return;
      example = await startExampleMcpServer({ port: new URL(exampleUrl).port, broker: base, url: exampleUrl });
    }

    it('server.mjs starts with one command and serves whoami to an SDK client holding a token for it', async () => {
      await startExample();
      const port = new URL(exampleUrl).port;
      const metadata = await (await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`)).json();
      expect(metadata).toMatchObject({
        resource: exampleUrl,
        authorization_servers: [base],
        scopes_supported: [MCP_SCOPE],
      });

      const forExample = provider();
      const client = await connectMcpClient(exampleUrl, forExample);
      clients.push(client);
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      expect(result.content).toEqual([
        {
          type: 'text',
          text: expect.stringMatching(new RegExp(`^You are ${ALICE} via agent [0-9a-f-]{36}; it is `)) as unknown,
        },
      ]);
      // A token for A is refused by the example (its aud is A).
      const refused = await fetch(exampleUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenForA}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(refused.status).toBe(401);
    });

    it('server.mjs takes a DPoP-bound token only as DPoP with a fresh proof of its key for its URL (RFC 9449 §4.3, §7), and an unbound one as Bearer', async () => {
      await startExample();
      // An agent with a client secret, for the example MCP server: client_credentials with resource.
      const admin = new ApiClient(broker.url('admin'));
      const created = await admin.post('/api/agents', {
        display_name: 'DPoP client',
        allowed_scopes: [MCP_SCOPE],
        permission_sets: [{ permission_set_id: exampleSet }],
      });
      expect(created.status, created.text).toBe(201);
      const client: oauth.Client = { client_id: created.json<{ id: string }>().id };
      const credentials = await admin.post(`/api/agents/${client.client_id}/client-credentials`, {});
      expect(credentials.status, credentials.text).toBe(201);
      const secret = credentials.json<{ client_secret: string }>().client_secret;
      const insecure = { [oauth.allowInsecureRequests]: true };
      const issuer = new URL(base);
      const as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
      );
      const token = async (DPoP?: oauth.DPoPHandle) =>
        oauth.processClientCredentialsResponse(
          as,
          client,
          await oauth.clientCredentialsGrantRequest(
            as,
            client,
            oauth.ClientSecretPost(secret),
            new URLSearchParams({ resource: exampleUrl, scope: MCP_SCOPE }),
            { DPoP, ...insecure },
          ),
        );

      const whoami = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'whoami', arguments: {} },
      });
      const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      /** whoami with oauth4webapi's DPoP support (proof by `DPoP` for the URL `addressed`), always sent to the example. */
      const withProof = async (accessToken: string, DPoP: oauth.DPoPHandle, addressed = exampleUrl) => {
        let sent: { headers: Record<string, string>; response: Response } | undefined;
        await oauth
          .protectedResourceRequest(accessToken, 'POST', new URL(addressed), new Headers(mcpHeaders), whoami, {
            DPoP,
            ...insecure,
            [oauth.customFetch]: async (_url, init) => {
              const response = await fetch(exampleUrl, init);
              sent = { headers: init.headers, response: response.clone() };
              return response;
            },
          })
          .catch((error: unknown) => {
            // A 401 with a challenge, which the assertions below read from the response.
            if (!(error instanceof oauth.WWWAuthenticateChallengeError)) throw error;
          });
        if (sent === undefined) throw new Error('nothing was sent');
        return sent;
      };
      const plain = (headers: Record<string, string>) =>
        fetch(exampleUrl, { method: 'POST', headers: { ...mcpHeaders, ...headers }, body: whoami });
      const challenge = (response: Response) => response.headers.get('www-authenticate') ?? '';
      const ALGS = /algs="ES256 ES384 ES512 PS256 PS384 PS512 RS256 RS384 RS512 EdDSA"/;

      // The broker binds the token to the key of the proof sent with the token request.
      const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
      const bound = await token(DPoP);
      expect(bound.token_type).toBe('dpop');
      expect(decodeJwt(bound.access_token)).toMatchObject({
        aud: exampleUrl,
        scope: MCP_SCOPE,
        cnf: { jkt: await DPoP.calculateThumbprint() },
      });

      const accepted = await withProof(bound.access_token, DPoP);
      expect(accepted.response.status).toBe(200);
      expect(await accepted.response.text()).toContain(`You are ${client.client_id} via agent`);
      expect(accepted.headers.authorization).toBe(`DPoP ${bound.access_token}`);

      // §7.2: the same token as a bearer token.
      const asBearer = await plain({ authorization: `Bearer ${bound.access_token}` });
      expect(asBearer.status).toBe(401);
      expect(challenge(asBearer)).toMatch(/^Bearer error="invalid_token"/);
      // §11.1: the accepted request again, proof and all.
      const replayed = await plain({
        authorization: accepted.headers.authorization as string,
        dpop: accepted.headers.dpop as string,
      });
      expect(replayed.status).toBe(401);
      expect(challenge(replayed)).toMatch(/^DPoP error="invalid_dpop_proof"/);
      expect(challenge(replayed)).toMatch(ALGS);
      // §4.3 step 9: a proof made for another URL of the same server.
      const elsewhere = await withProof(bound.access_token, DPoP, exampleUrl.replace(/\/mcp$/, '/other'));
      expect(elsewhere.response.status).toBe(401);
      expect(challenge(elsewhere.response)).toMatch(/^DPoP error="invalid_dpop_proof"/);
      // §4.3 step 12: a valid proof of another key.
      const otherKey = await withProof(bound.access_token, oauth.DPoP(client, await oauth.generateKeyPair('ES256')));
      expect(otherKey.response.status).toBe(401);
      expect(challenge(otherKey.response)).toMatch(/^DPoP error="invalid_token"/);
      // §7.1: the DPoP scheme without a proof.
      const noProof = await plain({ authorization: `DPoP ${bound.access_token}` });
      expect(noProof.status).toBe(401);
      expect(challenge(noProof)).toMatch(/^DPoP error="invalid_dpop_proof"/);

      // Without a proof the broker issues a bearer token, which works as before.
      const unbound = await token();
      expect(unbound.token_type).toBe('bearer');
      expect(decodeJwt(unbound.access_token).cnf).toBeUndefined();
      const bearer = await plain({ authorization: `Bearer ${unbound.access_token}` });
      expect(bearer.status).toBe(200);
      expect(await bearer.text()).toContain(`You are ${client.client_id} via agent`);
      // No credentials: both challenges, Bearer first (what MCP clients read).
      const anonymous = await plain({});
      expect(anonymous.status).toBe(401);
      expect(challenge(anonymous)).toMatch(/^Bearer .*resource_metadata=.*, DPoP .*algs=/);
    });
  });
});
