// npm run bench: every scenario, one table. Numbers go to bench/RESULTS.md by hand,
// with the machine they were measured on; tests never assert timings.
import { cpus } from 'node:os';
import { runScenario, startBroker } from './harness.mjs';

const broker = await startBroker();
const { enduser: user, admin } = broker.urls;
const results = [];
const adminHeaders = { 'x-remote-user': 'bench-admin@example.com', 'content-type': 'application/json' };
async function adminPost(path, body) {
  const response = await fetch(`${admin}${path}`, {
    method: 'POST',
    headers: adminHeaders,
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return response.json();
}
try {
  // A registry of realistic size: 50 services, 20 permission sets, 100 agents.
  const services = [];
  for (let i = 0; i < 50; i += 1) {
    services.push(
      await adminPost('/api/services', {
        display_name: `S${i}`,
        client_id: `c${i}`,
        client_secret: `secret-${i}`,
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/a',
        token_endpoint: 'https://idp.example.com/t',
        protected_resources: [`https://api${i}.example.com`],
      }),
    );
  }
  const sets = [];
  for (let i = 0; i < 20; i += 1) {
    sets.push(
      await adminPost('/api/permission-sets', {
        name: `P${i}`,
        service_scopes: services.slice(i, i + 3).map((s) => ({ service_id: s.id, scopes: ['read', 'write'] })),
      }),
    );
  }
  for (let i = 0; i < 100; i += 1) {
    await adminPost('/api/agents', {
      display_name: `A${i}`,
      redirect_uris: ['https://a.example.com/cb'],
      permission_sets: [{ permission_set_id: sets[i % 20].id }],
    });
  }
  const started = process.hrtime.bigint();
  for (const algorithm of ['ES256', 'EdDSA', 'RS256'])
    await adminPost('/api/oauth2-server/signing-keys', { algorithm });
  console.log(
    `3 signing keys (ES256, EdDSA, RS256) generated, sealed and stored in ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(0)} ms`,
  );

  results.push(await runScenario('GET /health (end-user)', `${user}/health`));
  results.push(await runScenario('GET /health (admin)', `${admin}/health`));
  results.push(
    await runScenario('GET /api/agents (100 agents)', `${admin}/api/agents`, {
      requests: 2_000,
      headers: { 'x-remote-user': 'bench' },
    }),
  );
  results.push(
    await runScenario('GET /api/services (50 services)', `${admin}/api/services`, {
      requests: 2_000,
      headers: { 'x-remote-user': 'bench' },
    }),
  );
  results.push(
    await runScenario(
      'GET /api/agents/{id}',
      `${admin}/api/agents/${(await (await fetch(`${admin}/api/agents`, { headers: adminHeaders })).json())[0].id}`,
      { requests: 5_000, headers: { 'x-remote-user': 'bench' } },
    ),
  );
  // client_credentials (next to oidc-provider) and GET /oauth2/jwks.json are measured on
  // PostgreSQL by bench/token-exchange.measure.ts, not here again on PGlite.
  results.push(
    await runScenario('unknown route with principal -> 404', `${user}/api/nothing`, {
      expectStatus: 404,
      headers: { 'x-remote-user': 'bench@example.com' },
    }),
  );
} finally {
  await broker.stop();
}
console.log(`node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}`);
console.table(results);
