import { ApiClient, launchBrowser, openConsolePage, startGatewayFixture, type GatewayFixture } from '@broker/testing';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { BOTH_SERVERS } from '../test/support/servers';

/**
 * The consent page's time to interactive against a local broker (loopback,
 * PGlite, the production build of the console). Cold: a fresh browser context each time
 * (no cache, no cookie), from navigation start until the Allow button can be pressed (the
 * agent, its permission sets and the grant state have loaded). Warm: a reload in the same
 * context (cached hashed assets). The Go original's budget is 5 s cold. Prints numbers;
 * asserts nothing.
 */
const RUNS = 15;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

describe('console: consent page time to interactive', () => {
  let fixture: GatewayFixture;
  let browser: Browser;
  let agentId = '';

  beforeAll(async () => {
    fixture = await startGatewayFixture({ servers: BOTH_SERVERS, config: { log: { level: 'warn' } } });
    const admin = new ApiClient(fixture.broker.url('admin'));
    const service = (
      await admin.post('/api/services', {
        display_name: 'Mail',
        client_id: 'c',
        client_secret: 's',
        issuer_uri: 'https://mail.example.com',
        authorization_endpoint: 'https://mail.example.com/a',
        token_endpoint: 'https://mail.example.com/t',
        scopes: [{ scope: 'mail.read', description: 'Read your mail' }],
        protected_resources: ['https://mail.example.com/api'],
      })
    ).json<{ id: string }>();
    const set = (
      await admin.post('/api/permission-sets', {
        name: 'Read mail',
        description: 'Read your mail',
        service_scopes: [{ service_id: service.id, scopes: ['mail.read'] }],
      })
    ).json<{ id: string }>();
    agentId = (
      await admin.post('/api/agents', {
        display_name: 'Mail assistant',
        description: 'Sorts your mail',
        redirect_uris: ['https://agent.example.com/cb'],
        permission_sets: [{ permission_set_id: set.id, requirement_type: 'mandatory' }],
      })
    ).json<{ id: string }>().id;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await fixture?.stop();
  });

  it('cold and warm loads of /agents/:id until Allow is enabled', async () => {
    const url = `${fixture.base}/agents/${agentId}`;
    const cold: number[] = [];
    const warm: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const recorded = await openConsolePage(browser, { broker: fixture.base, principal: 'alice@example.com' });
      const allow = recorded.page.getByRole('button', { name: /^allow/i });
      let started = performance.now();
      await recorded.page.goto(url);
      await allow.waitFor({ state: 'visible' });
      await allow.isEnabled();
      cold.push(performance.now() - started);
      started = performance.now();
      await recorded.page.reload();
      await allow.waitFor({ state: 'visible' });
      warm.push(performance.now() - started);
      await recorded.close();
    }
    const row = (name: string, values: number[]) =>
      `${name.padEnd(6)} median ${percentile(values, 50).toFixed(0).padStart(5)} ms   p95 ${percentile(values, 95).toFixed(0).padStart(5)} ms   max ${Math.max(
        ...values,
      )
        .toFixed(0)
        .padStart(5)} ms`;
    process.stdout.write(
      `\nconsent page time to interactive (${RUNS} runs, loopback, PGlite, headless Chromium)\n${row('cold', cold)}\n${row('warm', warm)}\n`,
    );
  });
});
