import {
  ApiClient,
  completeAuthorization,
  freePort,
  http,
  startTestBroker,
  startThirdPartyProvider,
  type TestBroker,
  type ThirdPartyProvider,
} from '@broker/testing';
import { TokenVault } from '@broker/vault';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { BOTH_SERVERS } from '../test/support/servers';
import { takeMachine } from './machine-lock';

/**
 * Third-party token refresh latency: the broker's whole refresh (lock, decrypt, provider
 * round trip on loopback to oidc-provider, seal, store) and, for comparison, reading a
 * fresh token from the vault. Numbers only; nothing asserts them.
 */
describe('third-party token vault', () => {
  let broker: TestBroker;
  let provider: ThirdPartyProvider;
  let vault: TokenVault;
  let serviceId: string;
  const principal = 'bench@example.com';
  let releaseMachine: (() => void) | undefined;

  beforeAll(async () => {
    // Not alongside the other benchmark file (vitest runs files in parallel): it may hold the machine for minutes.
    releaseMachine = await takeMachine();
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: publicUrl } },
        third_party_oauth2: { discovery: { allowed_networks: ['127.0.0.0/8'] } },
        log: { level: 'warn' },
      },
    });
    const admin = new ApiClient(broker.url('admin'));
    const p = 'https://placeholder.example.com';
    serviceId = (
      await admin.post('/api/services', {
        display_name: 'S',
        client_id: 'x',
        client_secret: 'x',
        issuer_uri: p,
        authorization_endpoint: `${p}/a`,
        token_endpoint: `${p}/t`,
        protected_resources: ['https://bench.example.com'],
      })
    ).json<{ id: string }>().id;
    provider = await startThirdPartyProvider({
      redirectUris: [`${publicUrl}/api/third-party/${serviceId}/oauth2/callback`],
      scopes: ['read'],
    });
    await admin.put(`/api/services/${serviceId}`, {
      display_name: 'S',
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
      issuer_uri: provider.issuer,
      protected_resources: ['https://bench.example.com'],
    });
    await admin.post('/api/permission-sets', {
      name: 'P',
      service_scopes: [{ service_id: serviceId, scopes: ['read'] }],
    });
    const start = await new ApiClient(publicUrl, principal).get(
      `/api/third-party/${serviceId}/oauth2/authorize?redirect_uri=${encodeURIComponent(`${publicUrl}/done`)}`,
    );
    await http(
      await completeAuthorization(
        start.headers.location as string,
        `${publicUrl}/api/third-party/${serviceId}/oauth2/callback`,
      ),
      { headers: { 'x-remote-user': principal } },
    );
    vault = broker.broker.server('enduser').app.get(TokenVault);
  }, 900_000);

  afterAll(async () => {
    await broker?.stop();
    await provider?.stop();
    releaseMachine?.();
  });

  async function measure(
    name: string,
    iterations: number,
    run: () => Promise<unknown>,
  ): Promise<Record<string, string | number>> {
    for (let i = 0; i < Math.min(10, iterations); i += 1) await run();
    const samples: number[] = [];
    for (let i = 0; i < iterations; i += 1) {
      const started = process.hrtime.bigint();
      await run();
      samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    samples.sort((a, b) => a - b);
    const at = (p: number): string =>
      (samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))] as number).toFixed(2);
    return { scenario: name, iterations, 'p50 ms': at(50), 'p95 ms': at(95), 'p99 ms': at(99), 'max ms': at(100) };
  }

  it('prints refresh latency', async () => {
    const rows = [
      await measure('forced refresh (lock, decrypt, provider round trip, seal, store)', 200, () =>
        vault.forceRefresh(principal, serviceId),
      ),
      await measure('getUsableToken on a fresh token (read + decrypt)', 2_000, () =>
        vault.getUsableToken(principal, serviceId),
      ),
    ];
    console.table(rows);
  });
});
