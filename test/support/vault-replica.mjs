// A broker replica in its own OS process (compiled dist/), on the database named in the
// config it receives over IPC. On request it runs `count` concurrent getUsableToken calls
// and answers with the access tokens (test only: tokens cross IPC, never a log).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { parseConfig } = require('../../dist/libs/config/src');
const { startServers } = require('../../dist/libs/bootstrap/src');
const { USER_API } = require('../../dist/apps/user-api/src/user-api.server');
const { TokenVault } = require('../../dist/libs/vault/src');

process.once('message', async ({ config }) => {
  const { config: parsed } = parseConfig(config, {});
  const broker = await startServers([USER_API], { config: parsed, logDestination: { write() {} } });
  process.send({ ready: true });
  process.once('message', async ({ principal, serviceId, count }) => {
    const vault = broker.server('enduser').app.get(TokenVault);
    const results = await Promise.allSettled(
      Array.from({ length: count }, () => vault.getUsableToken(principal, serviceId)),
    );
    process.send({
      tokens: results.map((r) =>
        r.status === 'fulfilled' ? r.value.accessToken : `error:${r.reason?.code ?? r.reason?.message}`,
      ),
    });
    await broker.shutdown();
    process.exit(0);
  });
});
