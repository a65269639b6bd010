#!/usr/bin/env node
// An agent that asks a person to approve one tool call, the standard way, then makes it. Run from the
// repository root:
//
//   node examples/mcp/ciba-client.mjs --client-id <agent id> --client-secret <secret> --login-hint alice@example.com
//     [--broker http://localhost:8000] [--mcp http://localhost:3001/mcp] [--to acme@example.com] [--amount 120]
//     [--binding-message "Pay ACME 120 EUR"]
//
// It sends the broker an OpenID CIBA backchannel authentication request (CIBA Core 1.0 §7, poll mode) whose
// authorization_details (RFC 9396) name the example MCP server's critical tool `send_payment` with these
// arguments, polls the token endpoint (§10.1: authorization_pending, slow_down) while the person decides on
// the console's approval page, and with the token calls exactly that tool with exactly those arguments.
// oauth4webapi does the OAuth side, the MCP TypeScript SDK the MCP side: nothing of the broker's own code.
// See README.md next to this file ("Asking the person for one call: CIBA") and docs/ciba.md.
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as oauth from 'oauth4webapi';

const TOOL_CALL_TYPE = 'urn:agent-identity-broker:tool-call';

const { values } = parseArgs({
  options: {
    'client-id': { type: 'string' },
    'client-secret': { type: 'string', default: process.env.CLIENT_SECRET },
    'login-hint': { type: 'string' },
    broker: { type: 'string', default: process.env.BROKER_URL ?? 'http://localhost:8000' },
    mcp: { type: 'string', default: process.env.MCP_SERVER_URL ?? 'http://localhost:3001/mcp' },
    to: { type: 'string', default: 'acme@example.com' },
    amount: { type: 'string', default: '120' },
    'binding-message': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help || !values['client-id'] || !values['client-secret'] || !values['login-hint']) {
  console.log(
    'usage: node examples/mcp/ciba-client.mjs --client-id <agent id> --client-secret <secret> --login-hint <person>\n' +
      '         [--broker http://localhost:8000] [--mcp http://localhost:3001/mcp] [--to acme@example.com] [--amount 120]\n' +
      '         [--binding-message <words the person sees next to the request>]   (CLIENT_SECRET may hold the secret)',
  );
  process.exit(values.help ? 0 : 2);
}
const amount = Number(values.amount);
if (!Number.isFinite(amount) || amount <= 0) {
  console.error('--amount must be a positive number');
  process.exit(2);
}
const args = { to: values.to, amount_eur: amount };
// CIBA §7.1: a short text shown both by the agent and on the person's approval page, so they know it is this request.
const bindingMessage = values['binding-message'] ?? `Pay ${amount} EUR to ${values.to}`;
const brokerUrl = new URL(values.broker);
// Plain http only for a broker on this machine (development); oauth4webapi refuses it otherwise.
const options = { [oauth.allowInsecureRequests]: brokerUrl.protocol === 'http:' };

// RFC 8414 metadata of the broker: endpoints and what it supports.
const as = await oauth
  .discoveryRequest(brokerUrl, { algorithm: 'oauth2', ...options })
  .then((response) => oauth.processDiscoveryResponse(brokerUrl, response))
  .catch((error) => fail(`cannot read the broker's metadata at ${brokerUrl} (${error.message}); start it first`));
if (as.backchannel_authentication_endpoint === undefined) {
  fail('the broker publishes no backchannel_authentication_endpoint: set oauth2_authorization_server.ciba.enabled');
}
if (!(as.authorization_details_types_supported ?? []).includes(TOOL_CALL_TYPE)) {
  fail(`the broker does not list ${TOOL_CALL_TYPE} in authorization_details_types_supported`);
}

// A confidential agent: its broker-issued client secret, sent with HTTP Basic (RFC 6749 §2.3.1).
const client = { client_id: values['client-id'] };
const clientAuth = oauth.ClientSecretBasic(values['client-secret']);

// RFC 9396 §2: exactly one entry of the broker's tool-call type, the call this agent wants to make.
const authorizationDetails = [
  {
    type: TOOL_CALL_TYPE,
    locations: [values.mcp],
    actions: ['call'],
    tool: 'send_payment',
    title: 'Send a payment',
    description: 'Pays an invoice from the company account',
    arguments: args,
    risk: 'critical',
  },
];

// CIBA §7.1-7.3: the request; the answer is an auth_req_id, its lifetime and the polling interval.
const request = await oauth.backchannelAuthenticationRequest(
  as,
  client,
  clientAuth,
  {
    login_hint: values['login-hint'],
    binding_message: bindingMessage,
    authorization_details: JSON.stringify(authorizationDetails),
  },
  options,
);
const ciba = await oauth.processBackchannelAuthenticationResponse(as, client, request).catch(oauthFailure);
console.log(`Asked ${values['login-hint']} to approve: send_payment ${JSON.stringify(args)}`);
console.log(`Binding message (the approval page shows the same words): ${bindingMessage}`);
console.log(`They decide on the console's approval page; polling for up to ${ciba.expires_in} s.`);

// CIBA §7.3, §11: wait `interval` seconds between polls (5 if absent); slow_down adds 5 s for all later polls.
let interval = ciba.interval ?? 5;
let tokens;
for (;;) {
  await sleep(interval * 1000);
  const response = await oauth.backchannelAuthenticationGrantRequest(as, client, clientAuth, ciba.auth_req_id, options);
  try {
    tokens = await oauth.processBackchannelAuthenticationGrantResponse(as, client, response);
    break;
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError && error.error === 'authorization_pending') continue;
    if (error instanceof oauth.ResponseBodyError && error.error === 'slow_down') {
      interval += 5;
      continue;
    }
    // access_denied (the person said no), expired_token (nobody decided in time), or a real error.
    oauthFailure(error);
  }
}
// RFC 9396 §7: the token response says what the token authorizes: the one call the person approved.
console.log(`Approved. The token authorizes: ${JSON.stringify(tokens.authorization_details)}`);

// The MCP call, with the token for this server (its `aud`): exactly the approved tool and arguments.
const mcp = new Client({ name: 'broker-example-ciba-client', version: '1.0.0' });
await mcp.connect(
  new StreamableHTTPClientTransport(new URL(values.mcp), {
    requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } },
  }),
);
const result = await mcp.callTool({ name: 'send_payment', arguments: args });
for (const part of result.content ?? []) if (part.type === 'text') console.log(part.text);
await mcp.close();
process.exit(result.isError ? 1 : 0);

/** An OAuth error answer (RFC 6749 §5.2, CIBA §11, §13) said in one line; never the secret or a token. */
function oauthFailure(error) {
  if (error instanceof oauth.ResponseBodyError) {
    fail(`${error.error}${error.error_description ? `: ${error.error_description}` : ''}`);
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) fail(`refused (${error.status}): client authentication`);
  throw error;
}

function fail(message) {
  console.error(message);
  process.exit(1);
}
