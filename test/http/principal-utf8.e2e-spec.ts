import { ApiClient, http, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, type RegistryFixture } from '../support/registry-fixture';
import { PROBED_SERVERS } from '../support/probe.module';

const CAFE = 'café';

/** A header value carrying these UTF-8 bytes on the wire (node:http writes header strings as Latin-1). */
const utf8 = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');
/** A header value carrying exactly these bytes. */
const bytes = (...values: number[]): string => Buffer.from(values).toString('latin1');

describe('a UTF-8 principal header', () => {
  let broker: TestBroker;
  let user: string;
  let admin: string;
  let reg: RegistryFixture;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: PROBED_SERVERS });
    user = broker.url('enduser');
    admin = broker.url('admin');
    reg = await createRegistry(new ApiClient(admin));
  });

  afterAll(async () => {
    await broker.stop();
  });

  const whoami = (base: string, value: string) =>
    http(`${base}/api/probe/whoami`, { headers: { 'x-remote-user': value } });

  it('is decoded as UTF-8 on both servers: café is café, not cafÃ©', async () => {
    for (const base of [user, admin]) {
      const response = await whoami(base, utf8(CAFE));
      expect(response.status, response.text).toBe(200);
      expect(response.json()).toEqual({ data: { id: CAFE, source: 'header' } });
    }
    const me = await http(`${user}/api/me`, { headers: { 'x-remote-user': utf8(CAFE) } });
    expect(me.json<{ data: { principal: string } }>().data.principal).toBe(CAFE);
  });

  it("lets a person's grants follow their name, by header and by the cookie issued for it", async () => {
    const cafe = new ApiClient(user, utf8(CAFE));
    // A Buffer body: node:http sends the head of a request with a string body in the body's encoding.
    const created = await http(`${user}/api/consent/agents/${reg.agent}/grants`, {
      method: 'POST',
      headers: { 'x-remote-user': utf8(CAFE), 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ granted_permission_sets: { [reg.readMail]: [reg.mail] } })),
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json<{ data: { principal: string } }>().data.principal).toBe(CAFE);
    const listed = (await cafe.get(`/api/consent/agents/${reg.agent}/grants`)).json<{ data: { principal: string }[] }>()
      .data;
    expect(listed.map((grant) => grant.principal)).toEqual([CAFE]);
    // The mis-decoded name is somebody else.
    expect((await new ApiClient(user, utf8('cafÃ©')).get(`/api/consent/agents/${reg.agent}/grants`)).json()).toEqual({
      data: [],
    });

    const setCookie = (await cafe.get('/api/me')).headers['set-cookie'] ?? [];
    const cookie = (setCookie.find((value) => value.startsWith('session_token=')) as string).split(';')[0] as string;
    const byCookie = await http(`${user}/api/consent/agents/${reg.agent}/grants`, { headers: { cookie } });
    expect(byCookie.json<{ data: { principal: string }[] }>().data.map((grant) => grant.principal)).toEqual([CAFE]);
  });

  it('accepts letters whose UTF-8 bytes look like C1 controls in Latin-1, and counts characters, not bytes', async () => {
    // Đ is C4 90: read as Latin-1 the 0x90 was a C1 control and the name was refused.
    expect((await whoami(user, utf8('Đorđe'))).json()).toEqual({ data: { id: 'Đorđe', source: 'header' } });
    expect((await whoami(admin, utf8('é'.repeat(200)))).status).toBe(200);
    const tooLong = await whoami(admin, utf8('é'.repeat(201)));
    expect(tooLong.status).toBe(400);
    expect(tooLong.json()).toEqual({
      error: 'bad request',
      message: 'the x-remote-user header is longer than 200 characters',
    });
  });

  it('still refuses a control character, now judged on the decoded text (U+0085 NEL)', async () => {
    const response = await whoami(user, utf8('alice\u0085admin'));
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({
      error: 'bad request',
      message: 'the x-remote-user header contains control characters',
    });
  });

  it('answers 400 bad request for bytes that are not UTF-8, on both servers', async () => {
    // A Latin-1 é, a truncated sequence, an overlong '/', a UTF-16 surrogate encoded in UTF-8.
    for (const value of [
      bytes(0x63, 0x61, 0x66, 0xe9),
      bytes(0x61, 0xe2, 0x82),
      bytes(0xc0, 0xaf),
      bytes(0xed, 0xa0, 0x80),
    ]) {
      for (const base of [user, admin]) {
        const response = await whoami(base, value);
        expect(response.status).toBe(400);
        expect(response.json()).toEqual({
          error: 'bad request',
          message: 'the x-remote-user header is not valid UTF-8',
        });
      }
    }
  });
});
