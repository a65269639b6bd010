#!/usr/bin/env node
// A gateway-style MCP server: its tool `profile` reads the person's profile at a third-party service with
// the person's own account there, which the broker keeps (examples/mcp/README.md, "When the agent needs access"):
//
//   node examples/mcp/gateway.mjs --resource http://localhost:9100/me [--service-name "Demo Drive"]
//        [--port 3002] [--broker http://localhost:8000] [--key data/mcp-gateway-key.json] [--scope "openid profile"]
//   node examples/mcp/gateway.mjs token --principal alice@example.com --agent <agent id>   (development only)
//
// Per tool call it trades the caller's token (the MCP client's bearer token, the person's token through the agent)
// for the service's token at the broker (RFC 8693, POST /oauth2/token, with its own client assertion, RFC 7523),
// then calls the service's API with it. When the broker refuses because the person has not allowed the agent that
// service (or the scopes asked for) or has no usable connection to it, the refusal carries an
// `authorization_request` (docs/authorization-requests.md): the tool call is answered with MCP's URL-mode
// elicitation (-32042 URLElicitationRequiredError, MCP 2025-11-25 "Elicitation") naming the broker's page, the
// gateway waits on the request's state (a long poll) and, once the person allowed it there, sends
// `notifications/elicitation/complete` to the client that made the call, which retries it.
//
// This gateway is also the broker's trust anchor for the token exchange (token_exchange.client_assertion): it signs
// its client assertions with the key in --key (created on first start, mode 0600) and publishes the public key at
// /jwks.json. The broker checks the person's token against the same anchor, so in this example the person's token is
// one this key signed too: `token` prints one (the stand-in for the sign-in in front of a real gateway). Tokens are
// never logged.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import express from 'express';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    port: { type: 'string', default: process.env.PORT ?? '3002' },
    url: { type: 'string', default: process.env.MCP_SERVER_URL },
    broker: { type: 'string', default: process.env.BROKER_URL ?? 'http://localhost:8000' },
    key: { type: 'string', default: process.env.GATEWAY_KEY_FILE ?? 'data/mcp-gateway-key.json' },
    subject: { type: 'string', default: 'mcp-gateway' },
    resource: { type: 'string', default: process.env.SERVICE_RESOURCE },
    api: { type: 'string' },
    scope: { type: 'string' },
    'service-name': { type: 'string' },
    principal: { type: 'string' },
    agent: { type: 'string' },
    ttl: { type: 'string', default: '3600' },
  },
});

const port = Number(values.port);
/** The MCP endpoint's public URL: the audience of the person's token (RFC 8707), as the MCP client addresses it. */
const mcpUrl = values.url ?? `http://localhost:${port}/mcp`;
/** The trust anchor's issuer: this gateway's origin (its JWKS at <origin>/jwks.json). */
const issuer = new URL(mcpUrl).origin;
/** The broker's public URL: its issuer (the client assertion's audience), token endpoint and console origin. */
const broker = values.broker.replace(/\/+$/, '');
const brokerOrigin = new URL(broker).origin;
const ALGORITHM = 'ES256';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The gateway's key pair: read from --key, or made once and written there (private JWK, mode 0600). */
async function loadKey(file) {
  if (!existsSync(file)) {
    const { privateKey } = await generateKeyPair(ALGORITHM, { extractable: true });
    const jwk = await exportJWK(privateKey);
    jwk.kid = await calculateJwkThumbprint(jwk);
    jwk.alg = ALGORITHM;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(jwk)}\n`, { mode: 0o600 });
    console.log(`created the gateway key ${file}`);
  }
  const jwk = JSON.parse(readFileSync(file, 'utf8'));
  const { d: _private, ...publicJwk } = jwk;
  return {
    privateKey: await importJWK(jwk, ALGORITHM),
    publicKey: await importJWK(publicJwk, ALGORITHM),
    publicJwk: { ...publicJwk, alg: ALGORITHM, use: 'sig' },
    kid: jwk.kid,
  };
}

const key = await loadKey(values.key);

const sign = (claims, { audience, typ, ttl }) =>
  new SignJWT({ jti: randomUUID(), ...claims })
    .setProtectedHeader({ alg: ALGORITHM, kid: key.kid, typ })
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(`${ttl}s`)
    .sign(key.privateKey);

if (positionals[0] === 'token') {
  // Development only: the person's token through the agent (sub, azp) for this MCP server, as the sign-in in front
  // of a real gateway would issue it. Printed for the MCP client's Authorization header.
  if (!values.principal || !values.agent) {
    console.error('usage: node examples/mcp/gateway.mjs token --principal <person> --agent <agent id> [--ttl 3600]');
    process.exit(2);
  }
  console.log(
    await sign({ sub: values.principal, azp: values.agent }, { audience: mcpUrl, typ: 'at+jwt', ttl: values.ttl }),
  );
  process.exit(0);
}
if (!values.resource) {
  console.error(
    'usage: node examples/mcp/gateway.mjs --resource <the service protected resource URI> [--service-name Name] [--broker http://localhost:8000] [--port 3002]',
  );
  process.exit(2);
}
const resource = values.resource;
/** The API the tool calls with the service's token: the protected resource itself unless told otherwise. */
const api = values.api ?? resource;
const serviceName = values['service-name'] ?? new URL(resource).host;

/** The gateway's client assertion (RFC 7523 §2.2), for the token exchange and the wait; a minute, used once. */
const clientAssertion = () => sign({ sub: values.subject }, { audience: broker, typ: 'JWT', ttl: 60 });

// --- The person's token ---------------------------------------------------------------------------------------

class Refusal extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/**
 * The bearer token must be the person's token for this MCP server: signed by the anchor's key, its issuer, `aud`
 * exactly this server's URL, not expired, with the person (`sub`) and the agent (`azp`). The broker checks it again.
 */
async function verifyPersonToken(token) {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, key.publicKey, {
      issuer,
      audience: mcpUrl,
      algorithms: [ALGORITHM],
      typ: 'at+jwt',
      requiredClaims: ['sub', 'exp'],
    }));
  } catch {
    throw new Refusal('invalid_token', 'the access token is not valid for this MCP server');
  }
  if (typeof payload.azp !== 'string' || payload.azp === '') {
    throw new Refusal('invalid_token', 'the access token names no agent (azp)');
  }
  return { token, clientId: payload.azp, scopes: [], expiresAt: payload.exp, extra: { sub: payload.sub } };
}

const resourceMetadataUrl = `${issuer}/.well-known/oauth-protected-resource${new URL(mcpUrl).pathname}`;

async function requireToken(request, response, next) {
  const [scheme = '', token, ...rest] = (request.headers.authorization ?? '').split(' ');
  const challenge = (refusal) =>
    [
      'Bearer',
      [
        ...(refusal ? [`error="${refusal.code}"`, `error_description="${refusal.message}"`] : []),
        `resource_metadata="${resourceMetadataUrl}"`,
      ].join(', '),
    ].join(' ');
  if (scheme.toLowerCase() !== 'bearer' || !token || rest.length > 0) {
    response.status(401).set('WWW-Authenticate', challenge()).end();
    return;
  }
  try {
    request.auth = await verifyPersonToken(token);
    next();
  } catch (error) {
    if (!(error instanceof Refusal)) return next(error);
    console.warn(`refused a request: ${error.message}`);
    response.status(401).set('WWW-Authenticate', challenge(error)).json({ error: error.code });
  }
}

// --- The broker ---------------------------------------------------------------------------------------------------

/** RFC 8693 at the broker: the service's token for the person, or the broker's refusal (status and body). */
async function exchange(subjectToken) {
  const form = new URLSearchParams({
    grant_type: EXCHANGE,
    client_assertion_type: JWT_BEARER,
    client_assertion: await clientAssertion(),
    subject_token: subjectToken,
    subject_token_type: ACCESS_TOKEN,
    resource,
  });
  if (values.scope) form.set('scope', values.scope);
  const response = await fetch(`${broker}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: form,
  });
  const body = await response.json().catch(() => ({}));
  return { ok: response.ok, status: response.status, body };
}

/** The broker's link, only if it is on the broker's origin and names the request it came with (never passed on otherwise). */
function trustedLink(request) {
  if (typeof request?.id !== 'string' || !UUID.test(request.id) || typeof request.url !== 'string') return undefined;
  let url;
  try {
    url = new URL(request.url);
  } catch {
    return undefined;
  }
  if (
    url.origin !== brokerOrigin ||
    url.pathname !== `${new URL(broker).pathname.replace(/\/$/, '')}/authorization-requests/${request.id}`
  ) {
    return undefined;
  }
  return url.href;
}

/**
 * The request's state at the broker: `If-None-Match: "pending"` holds the answer until it changes or `wait` seconds
 * pass (304: still pending). Without `wait`, answers at once.
 */
async function requestState(id, wait) {
  const headers = { 'x-client-assertion': await clientAssertion(), accept: 'application/json' };
  if (wait !== undefined) Object.assign(headers, { 'if-none-match': '"pending"', 'x-long-poll-timeout': String(wait) });
  const response = await fetch(`${broker}/api/authorization-requests/${id}/state`, { headers });
  if (response.status === 304) return { status: 'pending' };
  if (!response.ok) throw new Error(`the broker answered ${response.status} for the state of ${id}`);
  return (await response.json()).data;
}

// --- Authorization requests this gateway elicited -------------------------------------------------------------------

/**
 * Per authorization request id: whom it is for (the person and agent that made the call; the broker's state must say
 * the same), the MCP sessions it was elicited in (the only clients told it completed), and what the broker last said.
 */
const elicited = new Map();
/** Per person, agent and what was asked: the last request elicited, to tell them on the next call how it ended. */
const lastElicited = new Map();
const sessions = new Map();

const ownerKey = (auth) => JSON.stringify([auth.extra.sub, auth.clientId]);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits on the request until it is no longer pending; on `completed` tells each session it was elicited in. */
async function watch(id) {
  const entry = elicited.get(id);
  for (;;) {
    let state;
    try {
      state = await requestState(id, 60);
    } catch (error) {
      if (Date.now() > entry.expiresAt + 60_000) break;
      console.warn(`waiting on authorization request ${id}: ${error.message}; trying again`);
      await sleep(2000);
      continue;
    }
    if (state.status === 'pending') continue;
    if (state.principal !== entry.principal || state.agent_id !== entry.agentId) {
      console.warn(`authorization request ${id} is not for the caller it was elicited for: not told to anyone`);
      entry.status = 'mismatched';
      break;
    }
    entry.status = state.status;
    console.log(`authorization request ${id}: ${state.status}`);
    if (state.status === 'completed') {
      for (const sessionId of entry.sessions) {
        const session = sessions.get(sessionId);
        if (session === undefined) continue;
        await session.server.server
          .createElicitationCompletionNotifier(id)()
          .catch((error) => console.warn(`could not tell session ${sessionId}: ${error.message}`));
      }
    }
    break;
  }
  entry.watching = false;
  // Kept a while after it ended, so the next call can say how; then forgotten (the broker still knows).
  setTimeout(() => elicited.delete(id), 600_000).unref();
}

/** What happened to an earlier request, in words for the person, if it ended without access; else undefined. */
async function endedWithoutAccess(previous) {
  const entry = elicited.get(previous.id);
  let status = entry?.status;
  if (status === undefined || status === 'pending') {
    status = await requestState(previous.id)
      .then((state) => state.status)
      .catch(() => undefined);
  }
  if (status === 'denied') {
    return `You denied access to ${serviceName} on the broker's page, so the agent cannot read your profile there. Call the tool again if you want to be asked once more.`;
  }
  if (status === 'expired') {
    return `The link to allow access to ${serviceName} expired before you answered. Call the tool again for a new link.`;
  }
  return undefined;
}

const toolError = (text) => ({ isError: true, content: [{ type: 'text', text }] });

/** The `profile` tool for one MCP session. */
async function profile(session, extra) {
  const auth = extra.authInfo;
  const asked = JSON.stringify([ownerKey(auth), values.scope ?? '']);
  const exchanged = await exchange(auth.token);
  if (exchanged.ok) {
    lastElicited.delete(asked);
    const answer = await fetch(api, {
      headers: { authorization: `${exchanged.body.token_type ?? 'Bearer'} ${exchanged.body.access_token}` },
    });
    if (!answer.ok) return toolError(`${serviceName} answered ${answer.status}.`);
    return { content: [{ type: 'text', text: `Your profile at ${serviceName}: ${await answer.text()}` }] };
  }
  const { error = 'error', error_description: description = '', authorization_request: request } = exchanged.body;
  const url = request === undefined ? undefined : trustedLink(request);
  if (request !== undefined && url === undefined) {
    console.warn('the broker refusal carried a link that is not on the broker origin: not passed on');
  }
  if (url === undefined) {
    return toolError(`The broker refused access to ${serviceName} (${exchanged.status} ${error}: ${description}).`);
  }
  const previous = lastElicited.get(asked);
  if (previous !== undefined && previous.id !== request.id && !previous.told) {
    const words = await endedWithoutAccess(previous);
    if (words !== undefined) {
      lastElicited.set(asked, { id: request.id, told: true });
      return toolError(words);
    }
  }
  lastElicited.set(asked, { id: request.id, told: false });
  const message = `To read your profile at ${serviceName}, the agent needs your permission (${description}). Open the link, allow it (and connect your ${serviceName} account if asked), then come back.`;
  if (session.server.server.getClientCapabilities()?.elicitation?.url === undefined) {
    // A client without URL-mode elicitation gets the link in words.
    return toolError(`${message} ${url}`);
  }
  let entry = elicited.get(request.id);
  if (entry === undefined) {
    entry = {
      principal: auth.extra.sub,
      agentId: auth.clientId,
      sessions: new Set(),
      status: 'pending',
      watching: false,
      expiresAt: Date.parse(request.expires_at) || Date.now() + 600_000,
    };
    elicited.set(request.id, entry);
  }
  entry.sessions.add(session.id);
  if (!entry.watching && entry.status === 'pending') {
    entry.watching = true;
    void watch(request.id);
  }
  console.log(`elicited authorization request ${request.id} (${exchanged.status} ${error})`);
  throw new UrlElicitationRequiredError(
    [{ mode: 'url', elicitationId: request.id, url, message }],
    `Access to ${serviceName} needs your permission`,
  );
}

function mcpServer(session) {
  const server = new McpServer({ name: 'broker-example-gateway', version: '1.0.0' });
  server.registerTool(
    'profile',
    { description: `Reads your profile at ${serviceName} with your own account there` },
    (extra) => profile(session, extra),
  );
  return server;
}

// --- HTTP -----------------------------------------------------------------------------------------------------------

const app = express();
app.get('/jwks.json', (_request, response) => {
  response.json({ keys: [key.publicJwk] });
});
// RFC 9728: which tokens this resource takes (the anchor's).
app.get(new URL(resourceMetadataUrl).pathname, (_request, response) => {
  response.json({ resource: mcpUrl, authorization_servers: [issuer], bearer_methods_supported: ['header'] });
});

const notFound = (response) =>
  response.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });

/** A session is its creator's: a request for it with another person's or agent's token is answered as unknown. */
function sessionOf(request) {
  const session = sessions.get(request.headers['mcp-session-id']);
  return session !== undefined && session.owner === ownerKey(request.auth) ? session : undefined;
}

app.post('/mcp', express.json(), requireToken, async (request, response) => {
  if (request.headers['mcp-session-id'] !== undefined) {
    const session = sessionOf(request);
    if (session === undefined) return notFound(response);
    return session.transport.handleRequest(request, response, request.body);
  }
  if (!isInitializeRequest(request.body)) {
    return response
      .status(400)
      .json({ jsonrpc: '2.0', error: { code: -32000, message: 'initialize first' }, id: null });
  }
  const session = { id: undefined, owner: ownerKey(request.auth) };
  session.transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => {
      session.id = id;
      sessions.set(id, session);
    },
  });
  session.transport.onclose = () => sessions.delete(session.id);
  session.server = mcpServer(session);
  await session.server.connect(session.transport);
  await session.transport.handleRequest(request, response, request.body);
});
// GET: the session's stream for what the server sends on its own (the completion notification); DELETE: its end.
app.get('/mcp', requireToken, (request, response) => {
  const session = sessionOf(request);
  if (session === undefined) return notFound(response);
  return session.transport.handleRequest(request, response);
});
app.delete('/mcp', requireToken, (request, response) => {
  const session = sessionOf(request);
  if (session === undefined) return notFound(response);
  return session.transport.handleRequest(request, response);
});

const listener = createServer(app);
listener.listen(port, '127.0.0.1', () => {
  console.log(`MCP gateway on ${mcpUrl} (listening on 127.0.0.1:${port}); broker ${broker}; service ${resource}`);
  console.log(`trust anchor: issuer ${issuer}, JWKS ${issuer}/jwks.json`);
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    listener.closeAllConnections();
    listener.close(() => process.exit(0));
  });
}
