import { http, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBED_SERVERS } from '../support/probe.module';

const CONSENT_UI = 'https://consent.example.com';
const UNAUTHORIZED = { error: 'unauthorized', message: 'authentication required' };

function sessionCookie(setCookie: string[] | undefined): string {
  const cookie = (setCookie ?? []).find((value) => value.startsWith('session_token='));
  if (cookie === undefined) throw new Error('no session_token cookie was set');
  return cookie.split(';')[0] as string;
}

describe('principal authentication (trusted proxy header)', () => {
  let broker: TestBroker;
  let user: string;
  let admin: string;

  beforeAll(async () => {
    broker = await startTestBroker({
      servers: PROBED_SERVERS,
      config: { server: { enduser: { consent_ui_url: CONSENT_UI } } },
    });
    user = broker.url('enduser');
    admin = broker.url('admin');
  });

  afterAll(async () => {
    await broker.stop();
  });

  it('answers 401 without a principal on both servers', async () => {
    for (const base of [user, admin]) {
      const response = await http(`${base}/api/probe/whoami`);
      expect(response.status).toBe(401);
      expect(response.json()).toEqual(UNAUTHORIZED);
    }
  });

  it('accepts the principal header from a trusted peer, trimmed', async () => {
    const response = await http(`${admin}/api/probe/whoami`, { headers: { 'x-remote-user': '  alice@example.com  ' } });
    expect(response.status).toBe(200);
    expect(response.json()).toEqual({ data: { id: 'alice@example.com', source: 'header' } });
  });

  it('treats an empty principal header as no principal', async () => {
    expect((await http(`${admin}/api/probe/whoami`, { headers: { 'x-remote-user': '   ' } })).status).toBe(401);
  });

  it('answers 400 for a principal over 200 characters', async () => {
    const response = await http(`${user}/api/probe/whoami`, { headers: { 'x-remote-user': 'a'.repeat(201) } });
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({
      error: 'bad request',
      message: 'the x-remote-user header is longer than 200 characters',
    });
    expect((await http(`${user}/api/probe/whoami`, { headers: { 'x-remote-user': 'a'.repeat(200) } })).status).toBe(
      200,
    );
  });

  it('answers 400 for a principal with control characters', async () => {
    const response = await http(`${user}/api/probe/whoami`, { headers: { 'x-remote-user': 'alice\tadmin' } });
    expect(response.status).toBe(400);
    expect(response.json<{ error: string }>().error).toBe('bad request');
  });

  it('answers 400 when the principal header is sent twice', async () => {
    const response = await http(`${admin}/api/probe/whoami`, { headers: { 'x-remote-user': ['alice', 'mallory'] } });
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({ error: 'bad request', message: 'the x-remote-user header must be sent once' });
  });

  it('keeps /health public', async () => {
    expect((await http(`${user}/health`)).status).toBe(200);
    expect((await http(`${admin}/health`)).status).toBe(200);
  });

  describe('session cookie (end-user server)', () => {
    it('is set after a pre-authenticated request: HttpOnly, SameSite=Lax, not Secure on http', async () => {
      const response = await http(`${user}/api/probe/whoami`, { headers: { 'x-remote-user': 'carol' } });
      const raw = (response.headers['set-cookie'] ?? []).find((value) => value.startsWith('session_token=')) as string;
      expect(raw).toMatch(
        /^session_token=[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/,
      );
    });

    it('authenticates later requests by itself, and is not re-issued while fresh', async () => {
      const first = await http(`${user}/api/probe/whoami`, { headers: { 'x-remote-user': 'dave' } });
      const cookie = sessionCookie(first.headers['set-cookie']);
      const byCookie = await http(`${user}/api/probe/whoami`, { headers: { cookie } });
      expect(byCookie.status).toBe(200);
      expect(byCookie.json()).toEqual({ data: { id: 'dave', source: 'session_cookie' } });
      const again = await http(`${user}/api/probe/whoami`, { headers: { cookie, 'x-remote-user': 'dave' } });
      expect(again.headers['set-cookie']).toBeUndefined();
    });

    it('lets the header win when header and cookie differ, and re-issues the cookie', async () => {
      const cookie = sessionCookie(
        (await http(`${user}/api/probe/whoami`, { headers: { 'x-remote-user': 'erin' } })).headers['set-cookie'],
      );
      const response = await http(`${user}/api/probe/whoami`, { headers: { cookie, 'x-remote-user': 'frank' } });
      expect(response.json()).toEqual({ data: { id: 'frank', source: 'header' } });
      expect(sessionCookie(response.headers['set-cookie'])).not.toBe(cookie);
    });

    it('rejects a tampered cookie', async () => {
      const cookie = sessionCookie(
        (await http(`${user}/api/probe/whoami`, { headers: { 'x-remote-user': 'gina' } })).headers['set-cookie'],
      );
      const tampered = cookie.slice(0, -4) + (cookie.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      expect((await http(`${user}/api/probe/whoami`, { headers: { cookie: tampered } })).status).toBe(401);
    });

    it('refuses a mutating request authenticated only by the cookie unless it comes from an allowed origin', async () => {
      const cookie = sessionCookie(
        (await http(`${user}/api/probe/whoami`, { headers: { 'x-remote-user': 'hank' } })).headers['set-cookie'],
      );
      const noOrigin = await http(`${user}/api/probe/thing`, { method: 'DELETE', headers: { cookie } });
      expect(noOrigin.status).toBe(403);
      expect(noOrigin.json<{ error: string }>().error).toBe('forbidden');
      const foreign = await http(`${user}/api/probe/thing`, {
        method: 'DELETE',
        headers: { cookie, origin: 'https://evil.example' },
      });
      expect(foreign.status).toBe(403);
      const consent = await http(`${user}/api/probe/thing`, {
        method: 'DELETE',
        headers: { cookie, origin: CONSENT_UI },
      });
      expect(consent.status).toBe(200);
      expect(consent.json()).toEqual({ data: { removed_by: 'hank' } });
      const ownOrigin = await http(`${user}/api/probe/thing`, {
        method: 'DELETE',
        headers: { cookie, origin: 'http://localhost:8000' },
      });
      expect(ownOrigin.status).toBe(200);
    });

    it('never writes a session cookie value to the log', async () => {
      const issued: string[] = [];
      for (const name of ['judy', 'kim']) {
        const cookie = sessionCookie(
          (await http(`${user}/api/probe/whoami`, { headers: { 'x-remote-user': name } })).headers['set-cookie'],
        );
        issued.push(cookie.slice('session_token='.length));
        await http(`${user}/api/probe/thing`, { method: 'DELETE', headers: { cookie } });
      }
      expect(broker.logs.lines.length).toBeGreaterThan(0);
      expect(broker.logs.leaked(issued)).toEqual([]);
    });

    it('is not used on the admin server', async () => {
      const cookie = sessionCookie(
        (await http(`${user}/api/probe/whoami`, { headers: { 'x-remote-user': 'ivy' } })).headers['set-cookie'],
      );
      const response = await http(`${admin}/api/probe/whoami`, { headers: { cookie } });
      expect(response.status).toBe(401);
      const withHeader = await http(`${admin}/api/probe/whoami`, { headers: { 'x-remote-user': 'ivy' } });
      expect(withHeader.headers['set-cookie']).toBeUndefined();
    });
  });
});

describe('principal authentication configuration', () => {
  it('ignores the header from an untrusted peer: the request gets 401 on both servers', async () => {
    const untrusted = { authentication: { preauth: { trusted_sources: ['10.0.0.0/8'] } } };
    const broker = await startTestBroker({
      servers: PROBED_SERVERS,
      config: { server: { enduser: untrusted, admin: untrusted } },
    });
    try {
      for (const kind of ['enduser', 'admin'] as const) {
        const response = await http(`${broker.url(kind)}/api/probe/whoami`, {
          headers: { 'x-remote-user': 'alice@example.com' },
        });
        expect(response.status).toBe(401);
        expect(response.json()).toEqual(UNAUTHORIZED);
        // Not even an over-long value is looked at: the header is ignored, not validated.
        expect(
          (await http(`${broker.url(kind)}/api/probe/whoami`, { headers: { 'x-remote-user': 'a'.repeat(300) } }))
            .status,
        ).toBe(401);
      }
    } finally {
      await broker.stop();
    }
  });

  it('marks the session cookie Secure when the public URL is https', async () => {
    const broker = await startTestBroker({
      servers: PROBED_SERVERS,
      config: { server: { enduser: { public_url: 'https://broker.example.com' } } },
    });
    try {
      const response = await http(`${broker.url('enduser')}/api/probe/whoami`, {
        headers: { 'x-remote-user': 'alice' },
      });
      expect(response.headers['set-cookie']?.[0]).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await broker.stop();
    }
  });

  it('honours a configured header name', async () => {
    const renamed = { authentication: { preauth: { principal_header_name: 'X-Forwarded-User' } } };
    const broker = await startTestBroker({ servers: PROBED_SERVERS, config: { server: { admin: renamed } } });
    try {
      expect(
        (await http(`${broker.url('admin')}/api/probe/whoami`, { headers: { 'x-remote-user': 'alice' } })).status,
      ).toBe(401);
      const response = await http(`${broker.url('admin')}/api/probe/whoami`, {
        headers: { 'x-forwarded-user': 'alice' },
      });
      expect(response.json()).toEqual({ data: { id: 'alice', source: 'header' } });
    } finally {
      await broker.stop();
    }
  });
});
