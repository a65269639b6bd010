import { join } from 'node:path';
import { ConfigError, parseConfig } from '@broker/config';
import {
  BrokerProcess,
  http,
  pgliteStorage,
  startTestBroker,
  testConfigTree,
  writeConfigFile,
  type TestBroker,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_API } from '../../apps/admin-api/src/admin-api.server';
import { USER_API } from '../../apps/user-api/src/user-api.server';

/**
 * With no SSO proxy, `development.principal` names the person a request to the end-user server acts
 * as when it carries no principal header and no session cookie. Loopback listeners only; never the admin server.
 */

const DEVELOPER = 'dev@example.com';
const UUID = '0b6a2f4e-8d1c-4f3a-9e2b-5c7d8e9f0a1b';

async function me(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; principal: unknown; setCookie: string[] | undefined }> {
  const response = await http(`${url}/api/me`, { headers });
  return {
    status: response.status,
    principal: response.status === 200 ? response.json<{ data: { principal: string } }>().data.principal : undefined,
    setCookie: response.headers['set-cookie'],
  };
}

describe('development.principal on a loopback end-user server', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: [USER_API, ADMIN_API],
      config: { development: { principal: DEVELOPER } },
    });
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('acts as the development principal when a request carries no principal header and no session cookie', async () => {
    const answer = await me(broker.url('enduser'));
    expect(answer.status).toBe(200);
    expect(answer.principal).toBe(DEVELOPER);
  });

  it('lets the principal header win over the development principal', async () => {
    const answer = await me(broker.url('enduser'), { 'x-remote-user': 'bob@example.com' });
    expect(answer.status).toBe(200);
    expect(answer.principal).toBe('bob@example.com');
  });

  it('lets a valid session cookie win over the development principal', async () => {
    const first = await me(broker.url('enduser'), { 'x-remote-user': 'carol@example.com' });
    const cookie = first.setCookie?.[0]?.split(';')[0];
    expect(cookie).toBeDefined();
    const answer = await me(broker.url('enduser'), { cookie: cookie as string });
    expect(answer.principal).toBe('carol@example.com');
  });

  it('still refuses an unsafe request from a foreign page', async () => {
    const response = await http(`${broker.url('enduser')}/api/consent/agents/${UUID}/deny`, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(403);
    expect(response.json<{ error: string }>().error).toBe('forbidden');
  });

  it('never applies to the admin server', async () => {
    const response = await http(`${broker.url('admin')}/api/agents`);
    expect(response.status).toBe(401);
    expect(response.json<{ error: string }>().error).toBe('unauthorized');
  });
});

describe('without development.principal', () => {
  let broker: TestBroker;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: [USER_API] });
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('answers 401 to a request without a principal', async () => {
    expect((await me(broker.url('enduser'))).status).toBe(401);
  });
});

describe('development.principal in the configuration', () => {
  const load = (enduser: Record<string, unknown>, principal: unknown = DEVELOPER): unknown =>
    parseConfig(testConfigTree({ server: { enduser }, development: { principal } }), {});

  it('is refused when server.enduser.bind is not a loopback address, naming the key', () => {
    for (const bind of ['0.0.0.0', '::', '10.0.0.5', 'broker.example.com']) {
      expect(() => load({ bind })).toThrow(ConfigError);
      expect(() => load({ bind })).toThrow(
        `config error: development.principal is only allowed when server.enduser.bind is a loopback address (got "${bind}"): remove development.principal or bind to 127.0.0.1`,
      );
    }
  });

  it('is accepted on every loopback bind, with one loud warning', () => {
    for (const bind of ['127.0.0.1', '127.0.0.2', 'localhost', '::1']) {
      const { config, warnings } = parseConfig(
        testConfigTree({ server: { enduser: { bind } }, development: { principal: ` ${DEVELOPER} ` } }),
        {},
      );
      expect(config.development.principal).toBe(DEVELOPER);
      expect(warnings.filter((warning) => warning.includes('DEVELOPMENT PRINCIPAL IN USE'))).toHaveLength(1);
    }
  });

  it('must be a valid principal name', () => {
    expect(() => load({}, '   ')).toThrow(
      'config error: development.principal must be a principal name of 1-200 characters without control characters',
    );
    expect(() => load({}, 'a\u0007b')).toThrow('development.principal must be a principal name');
    expect(() => load({}, 42)).toThrow('development.principal must be');
  });

  it('is unset by default, without a warning', () => {
    const { config, warnings } = parseConfig(testConfigTree(), {});
    expect(config.development.principal).toBeUndefined();
    expect(warnings.some((warning) => warning.includes('DEVELOPMENT PRINCIPAL'))).toBe(false);
  });
});

describe('the broker process with development.principal', () => {
  function processConfig(extra: Record<string, unknown>): string {
    const { dir } = writeConfigFile({});
    return writeConfigFile({
      server: { enduser: { port: 0 }, admin: { port: 0 }, shutdown: { timeout: '10s' } },
      storage: { pglite: pgliteStorage(join(dir, 'pglite')) },
      ...extra,
      development: { keys_file: join(dir, 'development-keys.json'), principal: DEVELOPER },
    }).file;
  }

  it('stops with exit code 2 and one line naming the key when the end-user server binds a non-loopback address', async () => {
    const broker = new BrokerProcess('broker', ['--config', processConfig({ 'server.enduser.bind': '0.0.0.0' })]);
    const { code } = await broker.exited;
    expect(code).toBe(2);
    expect(broker.stderr.join('')).toBe(
      'config error: development.principal is only allowed when server.enduser.bind is a loopback address (got "0.0.0.0"): remove development.principal or bind to 127.0.0.1\n',
    );
  });

  it('logs a loud warning on every start and serves the development principal', async () => {
    const file = processConfig({});
    for (let start = 0; start < 2; start += 1) {
      const broker = new BrokerProcess('broker', ['--config', file]);
      try {
        const urls = await broker.listening(['enduser', 'admin']);
        const warnings = broker
          .records()
          .filter((record) => record.level === 'warn' && String(record.msg).includes('DEVELOPMENT PRINCIPAL IN USE'));
        expect(warnings).toHaveLength(1);
        expect(String(warnings[0]?.msg)).toContain(JSON.stringify(DEVELOPER));
        expect((await me(urls.enduser as string)).principal).toBe(DEVELOPER);
        expect((await http(`${urls.admin as string}/api/agents`)).status).toBe(401);
      } finally {
        broker.signal('SIGINT');
        expect((await broker.exited).code).toBe(0);
      }
    }
  });
});
