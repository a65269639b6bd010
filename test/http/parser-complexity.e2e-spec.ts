import { randomBytes } from 'node:crypto';
import { http, startTestBroker, type HttpResponse, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';
import { repeatedNamesForm, TOKEN_BODY_LIMIT } from '../support/repeated-names-form';

/**
 * The parsers of untrusted input: a form of repeated names is refused
 * with the repeated parameter named, on both routes, and the process keeps answering others
 * while a burst of them is parsed. How fast (linear, not quadratic) is measured by
 * bench/parser.measure.ts: tests assert no timings (guide, "Honest tests").
 */
describe('parsers of untrusted input', () => {
  let broker: TestBroker;
  const form = repeatedNamesForm();

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS });
  });

  afterAll(async () => {
    await broker.stop();
  });

  function sendForm(path: string, traceId = randomBytes(16).toString('hex')): Promise<HttpResponse> {
    return http(`${broker.url('enduser')}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      body: form,
    });
  }

  for (const [route, path] of [
    ['the hot route', '/oauth2/token'],
    ['the ordinary route', '/oauth2/token?via=express'],
  ] as const) {
    it(`refuses a 256 KiB form of distinct names each sent twice, naming the repeated parameter (${route})`, async () => {
      expect(form.length).toBeGreaterThan(TOKEN_BODY_LIMIT - 32);
      const response = await sendForm(path);
      expect(response.status, response.text).toBe(400);
      expect(response.json()).toEqual({ error: 'invalid_request', error_description: 'parameter 0 is repeated' });
    });
  }

  it('answers /health during a burst of such forms', async () => {
    const burst = Array.from({ length: 8 }, () => sendForm('/oauth2/token'));
    // Asked once the burst is on the wire: it queues behind whatever the burst costs.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const health = await http(`${broker.url('enduser')}/health`);
    const answers = await Promise.all(burst);
    expect(health.status).toBe(200);
    expect(answers.map((response) => response.status)).toEqual(Array.from({ length: 8 }, () => 400));
  });
});
