// A broker replica in its own OS process (compiled dist/): the end-user server only, on the
// database named in the config it receives over IPC, running its webhook delivery worker.
// On `stop` it shuts down and answers how many deliveries its worker delivered.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { parseConfig } = require('../../dist/libs/config/src');
const { startServers } = require('../../dist/libs/bootstrap/src');
const { USER_API } = require('../../dist/apps/user-api/src/user-api.server');
const { WebhookDeliveryWorker } = require('../../dist/libs/webhooks/src');

process.once('message', async ({ config }) => {
  const { config: parsed } = parseConfig(config, {});
  const broker = await startServers([USER_API], { config: parsed, logDestination: { write() {} } });
  process.send({ ready: true });
  process.once('message', async () => {
    const worker = broker.server('enduser').app.get(WebhookDeliveryWorker);
    await broker.shutdown();
    const { delivered } = worker.totals;
    process.send({ delivered }, () => process.exit(0));
  });
});
