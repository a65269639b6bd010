#!/usr/bin/env node
// An MCP client (the official SDK) that supports URL-mode elicitation (MCP 2025-11-25, "Elicitation"), to try
// examples/mcp/gateway.mjs without an IDE:
//
//   node examples/mcp/elicitation-client.mjs --token <the person's token> [--server http://localhost:3002/mcp]
//        [--tool profile] [--wait 600]
//
// It declares `elicitation: { url: {} }`, calls the tool and, when the server answers -32042
// (URLElicitationRequiredError), prints each link for the person with its host, and opens nothing itself: the
// person decides whether to open it. It then waits for the server's `notifications/elicitation/complete` naming
// that elicitation and retries the call once. Enter retries at once (the notification may never come, for
// instance after a Deny); after --wait seconds it gives up. The token is sent as `Authorization: Bearer` and never
// printed.
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/sdk/types.js';

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: process.env.MCP_SERVER_URL ?? 'http://localhost:3002/mcp' },
    token: { type: 'string', default: process.env.MCP_TOKEN },
    tool: { type: 'string', default: 'profile' },
    wait: { type: 'string', default: '600' },
  },
});
if (!values.token) {
  console.error('usage: node examples/mcp/elicitation-client.mjs --token <token> [--server http://localhost:3002/mcp]');
  process.exit(2);
}

/** Completion notifications waited for, by elicitation id; an unknown or already completed id is ignored. */
const waiting = new Map();

const client = new Client(
  { name: 'broker-example-elicitation-client', version: '1.0.0' },
  { capabilities: { elicitation: { url: {} } } },
);
client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
  const done = waiting.get(notification.params.elicitationId);
  if (done === undefined) return;
  waiting.delete(notification.params.elicitationId);
  done();
});
// A server may also ask in a request (elicitation/create): the same link, shown the same way.
client.setRequestHandler(ElicitRequestSchema, (request) => {
  if (request.params.mode !== 'url') return { action: 'decline' };
  show(request.params);
  return { action: 'accept' };
});

/** The link in full with its host apart, so the person can see where it leads before opening it. */
function show(elicitation) {
  const url = new URL(elicitation.url);
  console.log(
    `\n${elicitation.message}\n\n  ${url.href}\n\n(opens a page on ${url.host}; open it yourself if you agree)`,
  );
}

/** Resolves when every one of `ids` completed, Enter was pressed, or the wait is over. */
function completion(ids) {
  const notified = Promise.all(ids.map((id) => new Promise((resolve) => waiting.set(id, resolve)))).then(
    () => 'notified',
  );
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), Number(values.wait) * 1000)));
  let lines;
  const enter = process.stdin.isTTY
    ? new Promise((resolve) => {
        lines = createInterface({ input: process.stdin });
        console.log('waiting for the page to report back (Enter: retry now)');
        lines.once('line', () => resolve('enter'));
      })
    : new Promise(() => undefined);
  return Promise.race([notified, timeout, enter]).finally(() => {
    clearTimeout(timer);
    lines?.close();
  });
}

function print(result) {
  for (const part of result.content) if (part.type === 'text') console.log(part.text);
  if (result.isError) process.exitCode = 1;
}

const transport = new StreamableHTTPClientTransport(new URL(values.server), {
  requestInit: { headers: { authorization: `Bearer ${values.token}` } },
});
await client.connect(transport);
const call = () => client.callTool({ name: values.tool, arguments: {} });
try {
  print(await call());
} catch (error) {
  if (!(error instanceof UrlElicitationRequiredError)) throw error;
  for (const elicitation of error.elicitations) show(elicitation);
  const how = await completion(error.elicitations.map((elicitation) => elicitation.elicitationId));
  if (how === 'timeout') {
    console.log('no answer from the page in time: call again later');
    process.exitCode = 1;
  } else {
    console.log(how === 'notified' ? 'the server says it is done: calling again' : 'calling again');
    try {
      print(await call());
    } catch (again) {
      if (!(again instanceof UrlElicitationRequiredError)) throw again;
      console.log('still not allowed: call again once you are done on the page');
      process.exitCode = 1;
    }
  }
}
await client.close();
