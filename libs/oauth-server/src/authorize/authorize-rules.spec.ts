import type { Agent } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { assertPkceS256Challenge, assertRedirectUriRegistered, clientRedirect } from './authorize-rules';

const agent = {
  redirectUris: ['https://app.example.com/cb', 'http://127.0.0.1/native', 'http://[::1]:8080/cb'],
} as unknown as Agent;
const ISSUER = 'https://broker.example.com';

describe('assertRedirectUriRegistered', () => {
  it('accepts registered URIs exactly, and any port on loopback IP literals (RFC 8252)', () => {
    expect(assertRedirectUriRegistered(agent, 'https://app.example.com/cb')).toBe('https://app.example.com/cb');
    expect(assertRedirectUriRegistered(agent, 'http://127.0.0.1:53124/native')).toBe('http://127.0.0.1:53124/native');
    expect(assertRedirectUriRegistered(agent, 'http://[::1]:9999/cb')).toBe('http://[::1]:9999/cb');
  });

  it('refuses every trick: path traversal, case, added query, user info, other host, fragment, missing', () => {
    for (const uri of [
      'https://app.example.com/cb/../x',
      'https://App.example.com/cb',
      'https://app.example.com/CB',
      'https://app.example.com/cb?x=1',
      'https://user@app.example.com/cb',
      'https://evil.example.com/cb',
      'https://app.example.com/cb#f',
      'https://app.example.com/cb/',
      'http://127.0.0.1:5000/native/../x',
      'http://localhost:5000/native',
      'https://127.0.0.1:5000/native',
      '',
      undefined,
    ]) {
      expect(() => assertRedirectUriRegistered(agent, uri), String(uri)).toThrow(
        expect.objectContaining({ code: 'invalid_redirect_uri' }) as Error,
      );
    }
  });
});

describe('redirect URI scheme checked again before redirecting', () => {
  const legacy = {
    redirectUris: [
      'javascript:alert(document.domain)//x',
      'data:text/html,x',
      'http://agent.example.com/cb',
      'com.example.app:/cb',
    ],
  } as unknown as Agent;

  it('refuses a registered javascript:, data: or off-loopback http redirect URI (stored before the rule)', () => {
    for (const uri of ['javascript:alert(document.domain)//x', 'data:text/html,x', 'http://agent.example.com/cb']) {
      expect(() => assertRedirectUriRegistered(legacy, uri), uri).toThrow(
        expect.objectContaining({ code: 'invalid_redirect_uri' }) as Error,
      );
    }
    expect(assertRedirectUriRegistered(legacy, 'com.example.app:/cb')).toBe('com.example.app:/cb');
  });

  it('builds the redirect only to an allowed scheme', () => {
    expect(clientRedirect('https://app.example.com/cb?a=1', ISSUER, { code: 'c', state: undefined })).toBe(
      'https://app.example.com/cb?a=1&code=c&iss=https%3A%2F%2Fbroker.example.com',
    );
    expect(() => clientRedirect('javascript:alert(1)//', ISSUER, { error: 'access_denied' })).toThrow(
      expect.objectContaining({ code: 'invalid_redirect_uri' }) as Error,
    );
  });

  it('names the issuer on an error redirect as on a code (RFC 9207 §2), replacing an iss the redirect_uri carried', () => {
    const url = new URL(
      clientRedirect('https://app.example.com/cb?iss=forged', ISSUER, { error: 'invalid_target', state: 's' }),
    );
    expect(url.searchParams.getAll('iss')).toEqual([ISSUER]);
    expect(url.searchParams.get('error')).toBe('invalid_target');
  });
});

describe('assertPkceS256Challenge', () => {
  it('requires a 43-character challenge and S256', () => {
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    expect(assertPkceS256Challenge(challenge, 'S256')).toBe(challenge);
    for (const [c, m] of [
      [challenge, 'plain'],
      [challenge, undefined],
      [undefined, 'S256'],
      ['short', 'S256'],
    ] as const) {
      expect(() => assertPkceS256Challenge(c, m)).toThrow(
        expect.objectContaining({ code: 'invalid_request' }) as Error,
      );
    }
  });
});
