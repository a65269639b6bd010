#!/usr/bin/env node
// `npm run demo`: the broker on a throwaway embedded database, a sample third-party provider (panva's oidc-provider)
// and a demo agent + gateway, registered through the admin API, then the steps to follow (README "Try it").
//
//   node scripts/demo.mjs [--enduser-port 8000] [--admin-port 14000] [--admin-console-port 14001] [--provider-port 9100]
//                         [--agent-port 9999]
//
// Runs the built broker (dist/), so `npm run demo` builds first when the sources changed. Ctrl-C stops everything and deletes the data.
// Nothing here is production code: the provider, the gateway's signing key and the broker's keys are made up per run.
import { spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { stringify } from 'yaml';
import { demoGateway } from './demo-gateway.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = join(ROOT, 'dist/apps/broker/src/main.js');
const PRINCIPAL = 'demo@example.com';
const ADMIN_PRINCIPAL = 'demo-admin@example.com';
const GATEWAY_SUB = 'demo-gateway';
const RESOURCE = 'https://api.demo-drive.example/v1';
/** The tool calls the demo agent's gateway asks the person to approve (docs/approvals.md): one of each risk. */
const APPROVAL_REQUESTS = [
  {
    tool_name: 'drive.share_file',
    risk_level: 'medium',
    arguments: {
      path: '/reports/2026-q3.pdf',
      share_with: ['bob@example.com'],
      permissions: { can_edit: false, expires_in_days: 7 },
    },
    metadata: {
      reason: 'You asked me to send the Q3 report to Bob.',
      tool_title: 'Share a file',
      tool_description: 'Gives other people access to one of your Demo Drive files.',
      agent_session_id: 'demo-session-1',
    },
  },
  {
    tool_name: 'drive.delete_folder',
    risk_level: 'critical',
    arguments: { path: '/reports/drafts', recursive: true },
    metadata: {
      reason: 'You asked me to clean up the old drafts.',
      tool_title: 'Delete a folder',
      tool_description: 'Permanently deletes a folder and everything in it from Demo Drive.',
      agent_session_id: 'demo-session-1',
    },
  },
];
const SCOPES = [
  { scope: 'files.read', description: 'See your files and folders' },
  { scope: 'files.write', description: 'Create and change your files' },
];

const { values: args } = parseArgs({
  options: {
    'enduser-port': { type: 'string', default: '8000' },
    'admin-port': { type: 'string', default: '14000' },
    'admin-console-port': { type: 'string', default: '14001' },
    'provider-port': { type: 'string', default: '9100' },
    'agent-port': { type: 'string', default: '9999' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(
    'usage: node scripts/demo.mjs [--enduser-port 8000] [--admin-port 14000] [--admin-console-port 14001] [--provider-port 9100] [--agent-port 9999]',
  );
  process.exit(0);
}
const port = (name) => {
  const value = Number(args[name]);
  if (!Number.isInteger(value) || value < 1 || value > 65535)
    fail(`--${name} must be a port number (got "${args[name]}")`);
  return value;
};
const ports = {
  enduser: port('enduser-port'),
  admin: port('admin-port'),
  adminConsole: port('admin-console-port'),
  provider: port('provider-port'),
  agent: port('agent-port'),
};
const BROKER = `http://localhost:${ports.enduser}`;
const ADMIN = `http://localhost:${ports.admin}`;
/** The stand-in SSO proxy in front of the admin server: the admin console's address in a browser. */
const ADMIN_CONSOLE = `http://localhost:${ports.adminConsole}`;
const PROVIDER = `http://127.0.0.1:${ports.provider}`;
const AGENT = `http://localhost:${ports.agent}`;
const CALLBACK = `${AGENT}/callback`;

function fail(message) {
  console.error(`demo: ${message}`);
  process.exit(1);
}

if (!existsSync(ENTRY)) fail('the broker is not built: run `npm run demo` (it builds first) or `npm run build`');

// --- State torn down on exit -------------------------------------------------------------------------------------
const dataDir = mkdtempSync(join(tmpdir(), 'broker-demo-'));
const servers = [];
let broker;
let brokerExit;
let stopping = false;

async function stop(code) {
  if (stopping) return;
  stopping = true;
  if (broker !== undefined && broker.exitCode === null && broker.signalCode === null) {
    broker.kill('SIGINT');
    const exited = await Promise.race([brokerExit, new Promise((r) => setTimeout(() => r(undefined), 15_000))]);
    if (exited === undefined) broker.kill('SIGKILL');
    else if (exited.code !== 0 && code === 0) code = exited.code ?? 1;
  }
  await Promise.all(
    servers.map(
      (server) =>
        new Promise((r) => {
          server.closeAllConnections?.();
          server.close(() => r());
        }),
    ),
  );
  rmSync(dataDir, { recursive: true, force: true });
  if (code === 0) console.log('\ndemo stopped; its data was deleted.');
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void stop(0));
process.on('exit', () => {
  // A crash of this script never leaves the broker running.
  if (broker !== undefined && broker.exitCode === null) broker.kill('SIGKILL');
});

async function main() {
  // Checked first, so a busy port is named with the option that moves it (not the broker's config key).
  for (const [name, portNumber] of Object.entries(ports))
    await assertPortFree(portNumber, `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}-port`);
  // --- The gateway (trust anchor for token exchange) and the agent's redirect page -------------------------------
  const gatewayKey = await generateKeyPair('ES256');
  const gatewayJwk = { ...(await exportJWK(gatewayKey.publicKey)), kid: 'demo-gateway-1', alg: 'ES256', use: 'sig' };
  const gatewayIssuer = `${AGENT}/gateway`;
  const sign = (claims) =>
    new SignJWT({ jti: randomUUID(), ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: gatewayJwk.kid })
      .setIssuer(gatewayIssuer)
      .setAudience(BROKER)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(gatewayKey.privateKey);

  // --- The broker: both servers, local mode, PGlite in the throwaway directory -----------------------------------
  const configFile = join(dataDir, 'config.yaml');
  writeFileSync(
    configFile,
    stringify({
      server: {
        enduser: { port: ports.enduser, public_url: BROKER },
        // The admin server's public face is the stand-in SSO proxy (its pages' origin, docs/admin-console.md).
        admin: { port: ports.admin, public_url: ADMIN_CONSOLE },
        shutdown: { timeout: '5s' },
      },
      storage: { backend: 'pglite', pglite: { data_dir: join(dataDir, 'pglite') } },
      // Keys made up for this run (the data is deleted on exit), so no development-keys file is written.
      encryption: { keys: [{ id: 'demo-kek', key: randomBytes(32).toString('base64') }], current_key_id: 'demo-kek' },
      third_party_oauth2: { jwe_keys: [{ id: 'demo-jwe', key: randomBytes(32).toString('base64') }] },
      oauth2_authorization_server: { mode: 'local' },
      token_exchange: {
        client_assertion: { issuer_uri: gatewayIssuer, jwks_uri: `${gatewayIssuer}/jwks.json` },
        // docs/security.md: with default audiences, tell the gateway's assertion from a user token by its subject.
        authorization: { cel: { expression: `client_assertion.sub == "${GATEWAY_SUB}"` } },
      },
      // No SSO proxy here: every browser request and curl acts as this person (loopback only, warned in the log).
      development: { principal: PRINCIPAL, keys_file: join(dataDir, 'development-keys.json') },
    }),
    { mode: 0o600 },
  );
  const logFile = join(dataDir, 'broker.log');
  const errorFile = join(dataDir, 'broker-errors.log');
  // Its own process group: a terminal's Ctrl-C reaches this script only, which stops the broker once (a second signal
  // makes the broker exit at once). Its output goes to files, not pipes, so it never writes into a closed pipe. If this
  // script dies without stopping it (kill -9), the IPC channel closes and the preload shuts the broker down: no orphan
  // keeps the ports.
  const watchParent = join(dataDir, 'watch-parent.cjs');
  writeFileSync(
    watchParent,
    "process.channel && process.channel.unref();\nprocess.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));\n",
  );
  const out = openSync(logFile, 'a');
  const err = openSync(errorFile, 'a');
  broker = spawn(process.execPath, ['--require', watchParent, ENTRY, '--config', configFile], {
    cwd: ROOT,
    stdio: ['ignore', out, err, 'ipc'],
    detached: true,
  });
  closeSync(out);
  closeSync(err);
  brokerExit = new Promise((r) => broker.once('exit', (code, signal) => r({ code, signal })));
  void brokerExit.then(({ code, signal }) => {
    if (stopping) return;
    const reason = readFileSync(errorFile, 'utf8').trim();
    console.error(`demo: the broker stopped (${signal ?? `exit code ${code}`}): ${reason || `see ${logFile}`}`);
    void stop(1);
  });
  await waitUntilHealthy([`${BROKER}/health`, `${ADMIN}/health`], logFile);

  // --- Registration through the admin API -----------------------------------------------------------------------
  const admin = async (method, path, body) => {
    // The admin server believes the principal header from loopback (trusted_sources), as the SSO proxy sends it.
    const response = await fetch(`${ADMIN}${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-remote-user': ADMIN_PRINCIPAL },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`admin API ${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
  const providerClient = { id: 'agent-identity-broker', secret: randomBytes(24).toString('base64url') };
  const service = await admin('POST', '/api/services', {
    display_name: 'Demo Drive',
    description: 'A sample file storage service (oidc-provider on your machine) for the demo.',
    client_id: providerClient.id,
    client_secret: providerClient.secret,
    token_endpoint_auth_method: 'client_secret_basic',
    issuer_uri: PROVIDER,
    // Given, not discovered: issuer discovery refuses loopback addresses unless allowed.
    authorization_endpoint: `${PROVIDER}/auth`,
    token_endpoint: `${PROVIDER}/token`,
    scopes: SCOPES,
    protected_resources: [RESOURCE],
  });
  const set = await admin('POST', '/api/permission-sets', {
    name: 'Read Demo Drive',
    description: 'Look up and read your files in Demo Drive.',
    service_scopes: [{ service_id: service.id, scopes: ['files.read'], requirement_type: 'mandatory' }],
  });
  const agent = await admin('POST', '/api/agents', {
    display_name: 'Demo Assistant',
    description: 'A sample agent that reads your Demo Drive files when you ask it to.',
    canonical_id: 'demo-assistant',
    redirect_uris: [CALLBACK],
    permission_sets: [{ permission_set_id: set.id, requirement_type: 'mandatory' }],
  });

  // --- The sample third-party provider, now that the broker's callback URL (it names the service) is known --------
  // Its quick-start warnings (in-memory adapter, dev keys and login pages) are what a demo wants: kept off the screen.
  const warn = console.warn;
  console.warn = (...parts) => (String(parts[0]).includes('oidc-provider WARNING') ? undefined : warn(...parts));
  const { default: Provider } = await import('oidc-provider');
  const provider = new Provider(PROVIDER, {
    clients: [
      {
        client_id: providerClient.id,
        client_secret: providerClient.secret,
        redirect_uris: [`${BROKER}/api/third-party/${service.id}/oauth2/callback`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['openid', 'offline_access', ...SCOPES.map((s) => s.scope)],
    pkce: { required: () => true },
    issueRefreshToken: () => true,
    rotateRefreshToken: true,
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    ttl: { AccessToken: 3600, RefreshToken: 86_400, Grant: 86_400, Session: 3600, Interaction: 600 },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  });
  const providerServer = createServer(provider.callback());
  await listen(providerServer, ports.provider, 'the sample provider', '--provider-port');

  // --- The agent's client side: PKCE, the authorize URL, and the page its redirect URI shows ---------------------
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(12).toString('base64url');
  const authorize = new URL(`${BROKER}/oauth2/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: agent.id,
    redirect_uri: CALLBACK,
    scope: 'files.read',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })) {
    authorize.searchParams.set(k, v);
  }
  const exchangeCurl = [
    `curl -s ${BROKER}/oauth2/token \\`,
    `  -d grant_type=urn:ietf:params:oauth:grant-type:token-exchange \\`,
    `  -d subject_token_type=urn:ietf:params:oauth:token-type:access_token \\`,
    `  -d "subject_token=$(curl -s ${gatewayIssuer}/subject-token)" \\`,
    `  -d client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer \\`,
    `  -d "client_assertion=$(curl -s ${gatewayIssuer}/client-assertion)" \\`,
    `  --data-urlencode resource=${RESOURCE}`,
  ].join('\n');
  const redeemCurl = (code) =>
    [
      `curl -s ${BROKER}/oauth2/token \\`,
      `  -d grant_type=authorization_code -d client_id=${agent.id} \\`,
      `  -d code=${code} -d code_verifier=${verifier} \\`,
      `  --data-urlencode redirect_uri=${CALLBACK}`,
    ].join('\n');

  // The agent's two tool calls go through its gateway, which does what a real one does: a decision the person
  // remembered settles a call (no new request), anything else waits for them on the Approvals page.
  const gateway = demoGateway({
    broker: BROKER,
    principal: PRINCIPAL,
    agentId: agent.id,
    credentials: async () => ({
      subject: await sign({ sub: PRINCIPAL, azp: agent.id }),
      assertion: await sign({ sub: GATEWAY_SUB }),
    }),
  });
  const makeToolCalls = async () => {
    const outcomes = [];
    for (const call of APPROVAL_REQUESTS) outcomes.push(await gateway.toolCall(call));
    for (const outcome of outcomes) console.log(`gateway: ${outcome.call.tool_name}: ${OUTCOME_WORDS[outcome.kind]}`);
    return outcomes;
  };
  const approvalsForm = `<form method="post" action="/approvals"><p><button type="submit">Make two tool calls</button>
(sharing a file, deleting a folder): the gateway asks you on the <a href="${escape(BROKER)}/approvals">Approvals page</a>,
unless you already decided with “Always” (or for this agent session).</p></form>`;

  const agentServer = createServer((request, response) => {
    const url = new URL(request.url ?? '/', AGENT);
    const text = (status, body) => {
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      response.end(body);
    };
    void (async () => {
      switch (url.pathname) {
        case '/gateway/jwks.json':
          response.writeHead(200, { 'content-type': 'application/json' });
          return response.end(JSON.stringify({ keys: [gatewayJwk] }));
        case '/gateway/client-assertion':
          return text(200, await sign({ sub: GATEWAY_SUB }));
        case '/gateway/subject-token':
          // The gateway vouches for the person behind the agent's request: who (sub) through which agent (azp).
          return text(200, await sign({ sub: PRINCIPAL, azp: agent.id }));
        case '/callback':
          return page(response, callbackPage(url.searchParams, state, redeemCurl, exchangeCurl) + approvalsForm);
        case '/approvals':
          if (request.method !== 'POST') return text(405, 'POST to make the tool calls');
          {
            const outcomes = await makeToolCalls();
            // Something waits for the person: their Approvals page; else what the gateway did with each call.
            if (outcomes.some((outcome) => outcome.kind === 'asked' || outcome.kind === 'waiting')) {
              response.writeHead(303, { location: `${BROKER}/approvals`, 'cache-control': 'no-store' });
              return response.end();
            }
            return page(response, toolCallsPage(outcomes, BROKER) + approvalsForm);
          }
        case '/':
          return page(
            response,
            `<h1>Demo Assistant</h1><p><a href="${escape(authorize.toString())}">Ask the broker for access</a></p>${approvalsForm}`,
          );
        default:
          return text(404, 'not found');
      }
    })().catch((error) => text(500, String(error)));
  });
  await listen(agentServer, ports.agent, 'the demo agent', '--agent-port');

  // --- The admin console, behind a stand-in SSO proxy ---------------------------------------------------------------
  // A real deployment puts its SSO proxy in front of the admin server; here every request through this port is
  // signed in as the demo administrator (the header replaced, never taken from the browser).
  const adminProxy = createServer((request, response) => {
    const headers = { ...request.headers, 'x-remote-user': ADMIN_PRINCIPAL };
    const upstream = httpRequest(
      { host: '127.0.0.1', port: ports.admin, method: request.method, path: request.url, headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('the admin server is not answering');
    });
    request.pipe(upstream);
  });
  await listen(adminProxy, ports.adminConsole, 'the admin console proxy', '--admin-console-port');

  console.log(`
Agent Identity Broker demo: running. Ctrl-C stops everything (the data lives in ${dataDir} and is deleted).

  Signed in as        ${PRINCIPAL} (development.principal: there is no SSO proxy)
  Consent console     ${BROKER}/agents
  Demo agent          ${AGENT} (its page; redirect URI ${CALLBACK})
  Demo Drive          the sample provider on port ${ports.provider}: Connect takes you there (any name and password)
  Admin console       ${ADMIN_CONSOLE}/ (a stand-in SSO proxy signs you in as ${ADMIN_PRINCIPAL})
  Admin API           curl -H 'X-Remote-User: ${ADMIN_PRINCIPAL}' ${ADMIN}/api/agents
                      (agent ${agent.id}, service ${service.id}, permission set ${set.id})
  Broker log          ${logFile}

1. Consent. Open this URL in your browser, the Demo Assistant's authorization request
   (it redirects to the consent page):

   ${authorize.toString()}

   Or play the agent with curl and open the consent URL it is sent to:

   curl -s -o /dev/null -w '%{redirect_url}\\n' '${authorize.toString()}'

2. Connect, then allow. On the consent page, press Connect for Demo Drive (or connect it at
   ${BROKER}/connections), sign in at the sample provider with any name and password, press
   Continue; you are back. Then Allow: the browser lands on the agent's page,
   ${CALLBACK}, which shows the authorization code and the curl that redeems it.

3. Exchange. Play the gateway: trade the person's token for their Demo Drive token

${exchangeCurl}

   Before step 2 this answers 403 access_denied (no grant) or 400 invalid_grant (not connected);
   afterwards, 200 with Demo Drive's access_token. See and revoke everything at ${BROKER}/agents.

4. Approvals. Once you allowed the agent, press "Make two tool calls" on the demo agent's
   page, ${AGENT}, or play its gateway with

   curl -s -X POST ${AGENT}/approvals

   Its gateway first reads the decisions you remembered (GET /api/approvals?principal=...);
   the calls they do not settle wait for you at ${BROKER}/approvals: approve or deny them,
   remember a decision ("Always"), and make the calls again: what you remembered goes through
   (or is refused) without asking. Find it under Remembered; Activity shows every step.

5. Administer. Open the admin console, ${ADMIN_CONSOLE}/, as the broker's administrator:
   the overview (health, counts, signing keys, warnings), the Demo Assistant under Agents
   (its client credentials, and your grant once you allowed it: revoke it there), Demo Drive
   under Services (its callback URL), Activity across people with export, and Signing keys
   (rotate, retire).
`);
}

/** Polls the servers' health until both answer healthy (the broker logs and exits on a start-up error). */
async function waitUntilHealthy(urls, logFile) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answers = await Promise.all(
      urls.map((url) =>
        fetch(url).then(
          (r) => r.ok,
          () => false,
        ),
      ),
    );
    if (answers.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error(`the broker did not start within 60 s (log: ${logFile})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function assertPortFree(portNumber, option) {
  const probe = createServer();
  return listen(probe, portNumber, 'the demo', option).then(() => {
    servers.splice(servers.indexOf(probe), 1);
    return new Promise((r) => probe.close(() => r()));
  });
}

/** Listens on 127.0.0.1, failing with the option to change when the port is taken. */
function listen(server, portNumber, what, option) {
  servers.push(server);
  return new Promise((resolveListen, reject) => {
    server.once('error', (error) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `cannot start ${what}: port ${portNumber} is in use (stop the other process or pass ${option} <another port>)`,
            )
          : error,
      ),
    );
    server.listen(portNumber, '127.0.0.1', () => resolveListen());
  });
}

function escape(value) {
  return String(value).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
}

function page(response, body) {
  response.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    'referrer-policy': 'no-referrer',
  });
  response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo Assistant</title><style>body{font:16px/1.5 system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem}pre{background:#f3f4f6;padding:1rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}@media (prefers-color-scheme:dark){body{background:#111827;color:#e5e7eb}pre{background:#1f2937}a{color:#93c5fd}}</style>
</head><body>${body}</body></html>`);
}

/** What the gateway did with a tool call, in words (the demo's log and its page). */
const OUTCOME_WORDS = {
  allowed: 'went through: you allowed it with a decision you remembered (no new request)',
  refused: 'refused: you denied it with “Always” (no new request)',
  asked: 'waits for your decision on the Approvals page',
  waiting: 'already waits for your decision on the Approvals page',
  'no-grant': 'not asked: allow the Demo Assistant first (steps 1 and 2), then make the calls again',
};

/** The page after the tool calls when none waits for the person: what became of each. */
function toolCallsPage(outcomes, broker) {
  const items = outcomes
    .map(
      (outcome) =>
        `<li><strong>${escape(outcome.call.metadata.tool_title)}</strong> (<code>${escape(outcome.call.tool_name)}</code>): ${escape(OUTCOME_WORDS[outcome.kind])}</li>`,
    )
    .join('');
  return `<h1>Demo Assistant: tool calls</h1><ul>${items}</ul>
<p>See your remembered decisions at <a href="${escape(broker)}/approvals/remembered">Remembered</a>, and every step in
<a href="${escape(broker)}/activity">Activity</a>.</p>`;
}

/** The agent's redirect URI: the code (or the error) the broker sent, as text, with the next commands. */
function callbackPage(params, expectedState, redeemCurl, exchangeCurl) {
  const code = params.get('code');
  const error = params.get('error');
  const stateNote =
    params.get('state') === expectedState ? 'matches the one the agent sent' : 'does NOT match the one the agent sent';
  if (code === null) {
    return `<h1>Demo Assistant: no access</h1><p>The broker answered <code>${escape(error ?? 'nothing')}</code>${
      params.get('error_description') ? `: ${escape(params.get('error_description'))}` : ''
    } (state ${stateNote}).</p><p>Start again from the URL the demo printed.</p>`;
  }
  return `<h1>Demo Assistant: access granted</h1>
<p>The broker sent the authorization code <code>${escape(code)}</code> (state ${stateNote}).</p>
<h2>The agent redeems it (with its PKCE verifier)</h2>
<pre>${escape(redeemCurl(code))}</pre>
<h2>A gateway exchanges the person's token for their Demo Drive token</h2>
<pre>${escape(exchangeCurl)}</pre>
<p>Review or revoke the grant in the <a href="${escape(BROKER)}/agents">consent console</a>.</p>`;
}

main().catch((error) => {
  console.error(`demo: ${error instanceof Error ? error.message : String(error)}`);
  void stop(1);
});
