// A broker replica in its own OS process (compiled dist/): the end-user server only, on the
// database named in the config it receives over IPC, running its proactive refresh sweep.
// On `stop` it shuts down and answers how many sessions its sweeps refreshed.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { parseConfig } = require('../../dist/libs/config/src');
const { startServers } = require('../../dist/libs/bootstrap/src');
const { USER_API } = require('../../dist/apps/user-api/src/user-api.server');
const { ProactiveRefreshSweeper } = require('../../dist/libs/vault/src');

process.once('message', async ({ config }) => {
  const { config: parsed } = parseConfig(config, {});
  const broker = await startServers([USER_API], { config: parsed, logDestination: { write() {} } });
  process.send({ ready: true });
  process.once('message', async () => {
    const sweeper = broker.server('enduser').app.get(ProactiveRefreshSweeper);
    await broker.shutdown();
    const { refreshed } = sweeper.totals;
    process.send({ refreshed }, () => process.exit(0));
  });
});
