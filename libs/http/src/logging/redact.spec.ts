import { describe, expect, it } from 'vitest';
import { LogCapture } from '@broker/testing';
import { createLogger } from './create-logger';
import { REDACTED, redactSecrets } from './redact';

describe('redactSecrets', () => {
  it('replaces values under secret-named fields at any depth and keeps the rest', () => {
    const out = redactSecrets({
      access_token: 'at-123',
      nested: { client_secret: 'cs-456', headers: { authorization: 'Bearer x', cookie: 'session_token=y' } },
      list: [{ refresh_token: 'rt-789' }],
      keys: ['k1', 'k2'],
      code: 'auth-code',
      token_exchange: { audience: ['https://broker'] },
      principal: 'alice@example.com',
      count: 3,
    });
    expect(out).toEqual({
      access_token: REDACTED,
      nested: { client_secret: REDACTED, headers: { authorization: REDACTED, cookie: REDACTED } },
      list: [{ refresh_token: REDACTED }],
      keys: [REDACTED, REDACTED],
      code: REDACTED,
      token_exchange: { audience: ['https://broker'] },
      principal: 'alice@example.com',
      count: 3,
    });
  });

  it('keeps secrets out of a real log line, including thrown errors', () => {
    const logs = new LogCapture();
    const logger = createLogger({ log: { level: 'info', format: 'json' } }, logs);
    const error = Object.assign(new Error('query failed'), { parameters: ['plain-secret-param'], code: '23505' });
    logger.info(
      { subject_token: 'eyJhbGciOi.secret.jwt', client_assertion: 'assertion-value', err: error },
      'exchange',
    );
    expect(logs.leaked(['eyJhbGciOi.secret.jwt', 'assertion-value', 'plain-secret-param'])).toEqual([]);
    const [record] = logs.records();
    expect(record?.err).toMatchObject({ type: 'Error', message: 'query failed', code: '23505' });
  });
});
