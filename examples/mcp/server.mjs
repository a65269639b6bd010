#!/usr/bin/env node
// A small MCP server protected by the broker. Run from the repository root:
//
//   node examples/mcp/server.mjs [--port 3001] [--broker http://localhost:8000] [--url http://localhost:3001/mcp]
//
// (or PORT, BROKER_URL, MCP_SERVER_URL). It serves two tools over Streamable HTTP at /mcp, `whoami`
// and the critical `send_payment`, publishes RFC 9728 protected-resource metadata naming the broker
// as its authorization server, and accepts only broker access tokens meant for it: signed with a
// key of the broker's JWKS, `iss` the broker, `typ` at+jwt, not expired, `aud` this server's URL,
// and either scope `mcp:tools` or `authorization_details` approving a call of this server.
// `whoami` needs the scope. `send_payment` needs, whatever the scope, a token whose
// `authorization_details` (RFC 9396) hold an entry of type urn:agent-identity-broker:tool-call for
// this server naming this tool with exactly these arguments: the person approved this very call
// (the broker's backchannel authentication, docs/ciba.md); such a token runs it once.
// A token bound to a key (RFC 9449 DPoP, `cnf.jkt`) is accepted only as `Authorization: DPoP`
// with a proof signed by that key, checked as RFC 9449 §4.3 and §7.1 say; a token without `cnf`
// goes as `Authorization: Bearer` (RFC 6750). See README.md next to this file.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';
import * as z from 'zod';
import {
  calculateJwkThumbprint,
  createRemoteJWKSet,
  decodeProtectedHeader,
  EmbeddedJWK,
  errors,
  jwtVerify,
} from 'jose';

const SCOPE = 'mcp:tools';
/** The broker's `authorization_details` type for one tool call (docs/ciba.md "The authorization_details type"). */
const TOOL_CALL_TYPE = 'urn:agent-identity-broker:tool-call';
/** Tools the scope alone never allows: each call needs the person's approval of exactly that call. */
const CRITICAL_TOOLS = new Set(['send_payment']);
/** RFC 9449 §4.3 step 5: the proof algorithms accepted (asymmetric only), announced in the `algs` of the DPoP challenge. */
const DPOP_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA'];
/** RFC 9449 §4.3 step 11: a proof is accepted this long after its `iat`, and this far ahead of our clock. */
const PROOF_MAX_AGE_SECONDS = 60;
const PROOF_MAX_AHEAD_SECONDS = 5;

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.PORT ?? '3001' },
    broker: { type: 'string', default: process.env.BROKER_URL ?? 'http://localhost:8000' },
    url: { type: 'string', default: process.env.MCP_SERVER_URL },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(
    'usage: node examples/mcp/server.mjs [--port 3001] [--broker http://localhost:8000] [--url <public URL of /mcp>]',
  );
  process.exit(0);
}
const port = Number(values.port);
const broker = values.broker.replace(/\/+$/, '');
// This server's URL is its resource indicator: clients ask the broker for a token with
// resource=<this URL>, and the token's aud must be exactly it. It is also the URL clients
// address, so a DPoP proof's `htu` must name it (RFC 9449 §4.3 step 9).
const resource = values.url ?? `http://localhost:${port}/mcp`;
const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(resource));

// The broker's RFC 8414 metadata, read once at start-up: issuer and JWKS location.
const response = await fetch(`${broker}/.well-known/oauth-authorization-server`).catch((error) => {
  console.error(
    `cannot reach the broker at ${broker} (${error.cause?.code ?? error.message}); start it first (npm start)`,
  );
  process.exit(1);
});
if (!response.ok) {
  console.error(`${broker}/.well-known/oauth-authorization-server answered ${response.status}`);
  process.exit(1);
}
const metadata = await response.json();
if (metadata.client_id_metadata_document_supported !== true) {
  console.warn(
    'warning: the broker does not advertise client_id_metadata_document_supported; enable oauth2_authorization_server.cimd (see examples/mcp/broker.yaml) or MCP clients cannot identify themselves',
  );
}
// jose fetches the key set once and again only for an unknown kid (rotation), not per request.
const keys = createRemoteJWKSet(new URL(metadata.jwks_uri));

/** Why a request is refused: its status and the challenge that says so (RFC 6750 §3, RFC 9449 §7.1). */
class Refusal extends Error {
  /**
   * @param {number} status 401, or 403 for a missing scope
   * @param {'invalid_token' | 'invalid_dpop_proof' | 'insufficient_scope'} code
   * @param {string} description for the client (no token, no claim value)
   * @param {string} [reason] for this server's log only
   */
  constructor(status, code, description, reason = description) {
    super(description);
    this.status = status;
    this.code = code;
    this.reason = reason;
    /** False when more scope would not help (the challenge then names none). */
    this.scopeHint = true;
    /** Members added to the JSON answer (what to ask the person for). */
    this.members = {};
  }
}
const invalidToken = (description, reason) => new Refusal(401, 'invalid_token', description, reason);
const invalidProof = (description, reason) => new Refusal(401, 'invalid_dpop_proof', description, reason);

/** RFC 9068 / MCP authorization: the checks a resource server makes on a broker access token. */
async function verifyAccessToken(token) {
  try {
    const { payload } = await jwtVerify(token, keys, {
      issuer: metadata.issuer,
      audience: resource,
      typ: 'at+jwt',
      requiredClaims: ['exp', 'sub'],
    });
    return payload;
  } catch (error) {
    // The reason (wrong audience, expired, bad signature…) goes to this log, never the token.
    const reason = error instanceof errors.JOSEError ? `${error.code} ${error.message}` : 'not a JWT';
    throw invalidToken('the access token is not valid for this MCP server', reason);
  }
}

/** What the MCP SDK hands to tools as `extra.authInfo`. */
function authInfo(token, payload) {
  return {
    token,
    clientId: typeof payload.client_id === 'string' ? payload.client_id : '',
    scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
    expiresAt: payload.exp,
    resource: new URL(resource),
    extra: { sub: payload.sub, agent_id: payload.agent_id, jti: payload.jti, approvedCalls: approvedCalls(payload) },
  };
}

/**
 * The tool calls the token's `authorization_details` (RFC 9396 §2) approve on THIS server: entries of the broker's
 * tool-call type whose one location is this server's URL, with a tool name and an arguments object. Entries of
 * other types or for other servers are not ours to judge and are ignored.
 */
function approvedCalls(payload) {
  const details = Array.isArray(payload.authorization_details) ? payload.authorization_details : [];
  return details.filter(
    (entry) =>
      isObject(entry) &&
      entry.type === TOOL_CALL_TYPE &&
      Array.isArray(entry.locations) &&
      entry.locations.length === 1 &&
      entry.locations[0] === resource &&
      typeof entry.tool === 'string' &&
      isObject(entry.arguments),
  );
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * RFC 8785 (JCS) text of a JSON value: object members sorted, no white space. Two argument objects are the same
 * call exactly when their canonical texts are equal (member order and spacing do not matter, values do).
 */
function canonicalJson(value) {
  if (!isObject(value)) {
    return Array.isArray(value) ? `[${value.map(canonicalJson).join(',')}]` : JSON.stringify(value);
  }
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
    .join(',')}}`;
}

/**
 * Each approving token runs its call once (its `jti`, kept until it expires): a token good for "pay 120 EUR" pays
 * once, however often it is presented within its lifetime. (One process: replicas would share this store.)
 */
const usedApprovals = new Map();
function useApproval(jti, exp) {
  const now = Date.now() / 1000;
  for (const [seen, expires] of usedApprovals) if (expires <= now) usedApprovals.delete(seen);
  if (typeof jti !== 'string' || usedApprovals.has(jti)) return false;
  usedApprovals.set(jti, typeof exp === 'number' ? exp : now + 3600);
  return true;
}

/**
 * Why the token may not make this JSON-RPC message's call, or undefined when it may. RFC 6750 §3.1: a token that is
 * valid but does not cover the request is `403 insufficient_scope` (RFC 9396 defines no resource-server error code
 * of its own; the description says what is missing).
 */
function callRefusal(message, auth) {
  if (!isObject(message) || message.method !== 'tools/call') return undefined;
  const name = message.params?.name;
  const args = message.params?.arguments ?? {};
  if (!CRITICAL_TOOLS.has(name)) {
    return auth.scopes.includes(SCOPE)
      ? undefined
      : new Refusal(403, 'insufficient_scope', `the token needs scope ${SCOPE} for this tool`);
  }
  const approved = auth.extra.approvedCalls.some(
    (entry) => entry.tool === name && canonicalJson(entry.arguments) === canonicalJson(args),
  );
  let refusal;
  if (!approved) {
    refusal = new Refusal(
      403,
      'insufficient_scope',
      `${name} needs a token whose authorization_details (type ${TOOL_CALL_TYPE}) approve exactly this call: this tool and these arguments`,
      `${name}: no approved call matches (${auth.extra.approvedCalls.length} approved for this server)`,
    );
  } else if (!useApproval(auth.extra.jti, auth.expiresAt)) {
    refusal = new Refusal(403, 'insufficient_scope', `this approval of ${name} was already used: ask the person again`);
  } else {
    return undefined;
  }
  // What to ask the person for (the broker's backchannel authentication request, docs/ciba.md): this very call.
  refusal.scopeHint = false;
  refusal.members = {
    authorization_details: [
      { type: TOOL_CALL_TYPE, locations: [resource], actions: ['call'], tool: name, arguments: args },
    ],
  };
  return refusal;
}

/** `Authorization: Bearer <token>` (RFC 6750): a token not bound to any key. */
async function checkBearer(token) {
  const payload = await verifyAccessToken(token);
  // RFC 9449 §7.2: a DPoP-bound token presented as a bearer token is refused, or a stolen
  // one would work without the key it is bound to.
  if (payload.cnf !== undefined) {
    throw invalidToken('the access token is bound to a key: present it with the DPoP scheme and a proof');
  }
  return authInfo(token, payload);
}

/** `Authorization: DPoP <token>` with a `DPoP` proof (RFC 9449 §7.1). */
async function checkDpop(request, token) {
  const proof = theProof(request);
  const payload = await verifyAccessToken(token);
  // RFC 9449 §6.1: the broker binds a token to the RFC 7638 thumbprint of the client's key.
  const jkt = payload.cnf?.jkt;
  if (typeof jkt !== 'string') {
    throw invalidToken('the access token is not bound to a key: present it with the Bearer scheme');
  }
  const { jwk, claims } = await verifyProof(proof, request, token);
  // RFC 9449 §4.3 step 12: the proof is signed by the key the token is bound to.
  if ((await calculateJwkThumbprint(jwk, 'sha256')) !== jkt) {
    throw invalidToken('the DPoP proof is not signed with the key the access token is bound to');
  }
  rememberProof(jkt, claims.jti);
  return authInfo(token, payload);
}

/** RFC 9449 §4.3 steps 1-2: exactly one `DPoP` header (Node joins repeated ones in `headers`, not in `headersDistinct`). */
function theProof(request) {
  const proofs = request.headersDistinct.dpop ?? [];
  if (proofs.length !== 1) {
    throw invalidProof(proofs.length === 0 ? 'a DPoP proof is required' : 'more than one DPoP proof');
  }
  return proofs[0];
}

/** RFC 9449 §4.3 steps 2-12 for a proof sent to a protected resource (with `ath`); resolves with its key and claims. */
async function verifyProof(proof, request, token) {
  let header;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw invalidProof('the DPoP proof is not a JWT');
  }
  if (header.typ !== 'dpop+jwt') throw invalidProof('the DPoP proof must have typ dpop+jwt');
  if (!DPOP_ALGORITHMS.includes(header.alg)) throw invalidProof('the DPoP proof algorithm is not accepted here');
  if (!isPublicJwk(header.jwk)) throw invalidProof('the DPoP proof jwk must be a public key');
  let claims;
  try {
    // The signature, checked with the key the proof carries.
    ({ payload: claims } = await jwtVerify(proof, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: DPOP_ALGORITHMS,
      requiredClaims: ['jti', 'htm', 'htu', 'iat', 'ath'],
    }));
  } catch (error) {
    const reason = error instanceof errors.JOSEError ? `${error.code} ${error.message}` : 'not a JWS';
    throw invalidProof('the DPoP proof signature or claims are not valid', `DPoP proof: ${reason}`);
  }
  if (typeof claims.jti !== 'string' || claims.jti === '') throw invalidProof('the DPoP proof needs a jti');
  if (claims.htm !== request.method) throw invalidProof('the DPoP proof is for another HTTP method');
  if (typeof claims.htu !== 'string' || normalizedUri(claims.htu) !== expectedHtu) {
    throw invalidProof('the DPoP proof is for another URL');
  }
  const age = Date.now() / 1000 - claims.iat;
  if (age > PROOF_MAX_AGE_SECONDS || age < -PROOF_MAX_AHEAD_SECONDS) {
    throw invalidProof('the DPoP proof is too old or issued in the future');
  }
  // RFC 9449 §4.2: ath is the base64url SHA-256 of the access token sent with the proof.
  if (claims.ath !== createHash('sha256').update(token).digest('base64url')) {
    throw invalidProof('the DPoP proof is for another access token');
  }
  return { jwk: header.jwk, claims };
}

/** RFC 9449 §4.3 step 7: an asymmetric public key, without any private or symmetric member (RFC 7518 §6). */
function isPublicJwk(jwk) {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return false;
  if (!['EC', 'RSA', 'OKP'].includes(jwk.kty)) return false;
  return !['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'].some((member) => member in jwk);
}

/**
 * RFC 9449 §4.3 step 9: `htu` compared without query and fragment, after syntax-based
 * (RFC 3986 §6.2.2: case, percent-encoding, dot segments) and scheme-based (§6.2.3: default
 * port, empty path) normalization. The URL parser does all but the percent-encoding part.
 */
function normalizedUri(value) {
  const decoded = value.replace(/%([0-9A-Fa-f]{2})/g, (_triplet, hex) => {
    const character = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9._~-]/.test(character) ? character : `%${hex.toUpperCase()}`;
  });
  try {
    const url = new URL(decoded);
    url.search = '';
    url.hash = '';
    return url.href;
  } catch {
    return undefined;
  }
}

/** The one protected URL, /mcp, as clients address it. */
const expectedHtu = normalizedUri(resource);

/**
 * RFC 9449 §11.1: each proof is accepted once. A proof's `jti` is kept while its `iat` could
 * still pass the age check; entries are added in time order, so the oldest expire first.
 * (One process: replicas behind a load balancer would share this store.)
 */
const seenProofs = new Map();
function rememberProof(jkt, jti) {
  const now = Date.now();
  for (const [seen, expires] of seenProofs) {
    if (expires > now) break;
    seenProofs.delete(seen);
  }
  const key = `${jkt} ${jti}`;
  if (seenProofs.has(key)) throw invalidProof('the DPoP proof was already used');
  seenProofs.set(key, now + (PROOF_MAX_AGE_SECONDS + PROOF_MAX_AHEAD_SECONDS) * 1000);
}

/** A challenge of one scheme (RFC 9110 §11.6.1); DPoP's names the accepted proof algorithms (RFC 9449 §7.1). */
function challenge(scheme, refusal) {
  const parameters = refusal ? [`error="${refusal.code}"`, `error_description="${refusal.message}"`] : [];
  if (refusal?.scopeHint !== false) parameters.push(`scope="${SCOPE}"`);
  parameters.push(`resource_metadata="${resourceMetadataUrl}"`);
  if (scheme === 'DPoP') parameters.push(`algs="${DPOP_ALGORITHMS.join(' ')}"`);
  return `${scheme} ${parameters.join(', ')}`;
}

/**
 * Every request to /mcp needs a broker access token for this server with `mcp:tools`, as a
 * bearer token or DPoP-bound. (The MCP SDK's requireBearerAuth knows the Bearer scheme only.)
 */
async function requireAccessToken(request, response, next) {
  const [scheme = '', token, ...rest] = (request.headers.authorization ?? '').split(' ');
  // Auth schemes are case-insensitive (RFC 9110 §11.1).
  const kind = token && rest.length === 0 ? scheme.toLowerCase() : '';
  if (kind !== 'bearer' && kind !== 'dpop') {
    // No credentials (RFC 6750 §3.1: no error code): either scheme will do, Bearer first for MCP clients.
    response
      .status(401)
      .set('WWW-Authenticate', [challenge('Bearer'), challenge('DPoP')])
      .end();
    return;
  }
  const answerScheme = kind === 'dpop' ? 'DPoP' : 'Bearer';
  try {
    const auth = kind === 'dpop' ? await checkDpop(request, token) : await checkBearer(token);
    // The scope, or an approved call of this server (which alone allows only that call and listing the tools).
    if (!auth.scopes.includes(SCOPE) && auth.extra.approvedCalls.length === 0) {
      throw new Refusal(403, 'insufficient_scope', `the token needs scope ${SCOPE}`);
    }
    request.auth = auth;
    request.authScheme = answerScheme;
    next();
  } catch (error) {
    if (!(error instanceof Refusal)) return next(error);
    console.warn(`refused a ${answerScheme} request: ${error.reason}`);
    response.status(error.status).set('WWW-Authenticate', challenge(answerScheme, error));
    response.json({ error: error.code, error_description: error.message });
  }
}

/** Every tool call of the request (one JSON-RPC message, or a batch) must be one the token allows (`callRefusal`). */
function authorizeToolCalls(request, response, next) {
  const messages = Array.isArray(request.body) ? request.body : [request.body];
  for (const message of messages) {
    const refusal = callRefusal(message, request.auth);
    if (refusal === undefined) continue;
    console.warn(`refused a tool call: ${refusal.reason}`);
    response.status(refusal.status).set('WWW-Authenticate', challenge(request.authScheme, refusal));
    response.json({ error: refusal.code, error_description: refusal.message, ...refusal.members });
    return;
  }
  next();
}

const app = express();
// GET /.well-known/oauth-protected-resource/mcp: { resource, authorization_servers: [broker], scopes_supported }.
app.use(
  mcpAuthMetadataRouter({
    oauthMetadata: metadata,
    resourceServerUrl: new URL(resource),
    scopesSupported: [SCOPE],
    resourceName: 'Broker example MCP server',
  }),
);

// Stateless Streamable HTTP: a fresh server and transport per request.
app.post('/mcp', express.json(), requireAccessToken, authorizeToolCalls, async (request, response) => {
  const server = new McpServer({ name: 'broker-example', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: 'Says who the broker says is calling, through which agent, and when' },
    (extra) => ({
      content: [
        {
          type: 'text',
          text: `You are ${extra.authInfo?.extra?.sub} via agent ${extra.authInfo?.extra?.agent_id}; it is ${new Date().toISOString()}.`,
        },
      ],
    }),
  );
  server.registerTool(
    'send_payment',
    {
      title: 'Send a payment',
      description:
        "Pays an invoice from the company account. Critical: needs a token approving exactly this call (authorization_details of type urn:agent-identity-broker:tool-call, the broker's backchannel authentication).",
      inputSchema: { to: z.string().min(1), amount_eur: z.number().positive() },
    },
    ({ to, amount_eur: amount }, extra) => ({
      // An example: nothing is paid. A real server would pay here, after the checks above.
      content: [
        {
          type: 'text',
          text: `Paid ${amount} EUR to ${to}, approved by ${extra.authInfo?.extra?.sub} (example: no money moved).`,
        },
      ],
    }),
  );
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  response.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, request.body);
});
app.all('/mcp', requireAccessToken, (_request, response) => {
  response.status(405).set('allow', 'POST').json({ error: 'method_not_allowed' });
});

const listener = createServer(app);
listener.listen(port, '127.0.0.1', () => {
  console.log(`MCP server on ${resource} (listening on 127.0.0.1:${port}); authorization server ${metadata.issuer}`);
  console.log(`protected-resource metadata: ${resourceMetadataUrl}`);
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    listener.closeAllConnections();
    listener.close(() => process.exit(0));
  });
}
