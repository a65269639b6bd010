// npm run bench: every scenario, one table. Numbers go to bench/RESULTS.md by hand,
// with the machine they were measured on; tests never assert timings.
import { cpus } from 'node:os';
import { runScenario, startBroker } from './harness.mjs';

const broker = await startBroker();
const { enduser: user, admin } = broker.urls;
const results = [];
try {
  results.push(await runScenario('GET /health (end-user)', `${user}/health`));
  results.push(await runScenario('GET /health (admin)', `${admin}/health`));
  results.push(await runScenario('unknown route with principal -> 404', `${user}/api/nothing`, { expectStatus: 404, headers: { 'x-remote-user': 'bench@example.com' } }));
} finally {
  await broker.stop();
}
console.log(`node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}`);
console.table(results);
