import { describe, expect, it } from 'vitest';
import { validateClientMetadata } from './client-metadata';

const URL_ = 'https://agent.example.com/client.json';
const valid = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  client_id: URL_,
  redirect_uris: ['https://agent.example.com/cb', 'com.example.agent:/cb', 'http://127.0.0.1/cb'],
  logo_uri: 'https://agent.example.com/logo.png',
  ...extra,
});

describe('validateClientMetadata', () => {
  it('keeps only the redirect URIs and the logo of a valid document', () => {
    expect(validateClientMetadata(URL_, valid({ padding: 'x'.repeat(1000) }))).toEqual({
      redirectUris: ['https://agent.example.com/cb', 'com.example.agent:/cb', 'http://127.0.0.1/cb'],
      logoUri: 'https://agent.example.com/logo.png',
    });
    expect(validateClientMetadata(URL_, { client_id: URL_ })).toEqual({ redirectUris: [], logoUri: null });
  });

  it('refuses a javascript:, data:, vbscript: or file: redirect URI anywhere in the list, and plain http off loopback', () => {
    for (const bad of [
      'javascript:alert(document.domain)//x',
      'data:text/html,x',
      'vbscript:x',
      'file:///etc/passwd',
      'http://agent.example.com/cb',
    ]) {
      expect(
        () => validateClientMetadata(URL_, valid({ redirect_uris: ['https://agent.example.com/cb', bad] })),
        bad,
      ).toThrow('lists a redirect_uri that is not https');
    }
    expect(() => validateClientMetadata(URL_, valid({ redirect_uris: 'https://agent.example.com/cb' }))).toThrow(
      'redirect_uri',
    );
    expect(() => validateClientMetadata(URL_, valid({ redirect_uris: [42] }))).toThrow('redirect_uri');
  });

  it('refuses a logo_uri that is not https (or loopback http)', () => {
    for (const bad of [
      'javascript:alert(1)',
      'data:image/svg+xml,<svg onload=alert(1)>',
      'http://cdn.example.com/logo.png',
      42,
    ]) {
      expect(() => validateClientMetadata(URL_, valid({ logo_uri: bad })), String(bad)).toThrow('logo_uri');
    }
  });

  it('refuses another client_id and shared-secret authentication methods', () => {
    expect(() => validateClientMetadata(URL_, valid({ client_id: 'https://agent.example.com/other.json' }))).toThrow(
      'names another client_id',
    );
    expect(() => validateClientMetadata(URL_, valid({ token_endpoint_auth_method: 'client_secret_post' }))).toThrow(
      'shared-secret',
    );
  });
});
