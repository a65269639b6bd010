import { describe, expect, it } from 'vitest';
import { browserErrorCode } from './console.middleware';

describe('browserErrorCode: which error answers a browser sees as the console page', () => {
  it('names the authorization endpoint errors by a fixed code, never by anything else', () => {
    expect(browserErrorCode('/oauth2/authorize', 400, 'invalid_client')).toBe('invalid_client');
    expect(browserErrorCode('/oauth2/authorize', 400, 'invalid_redirect_uri')).toBe('invalid_redirect_uri');
    expect(browserErrorCode('/oauth2/authorize', 400, '"><script>')).toBe('invalid_request');
    expect(browserErrorCode('/oauth2/authorize', 401, 'invalid_client')).toBe('unauthenticated');
    expect(browserErrorCode('/oauth2/authorize', 500, 'server_error')).toBe('server_error');
    expect(browserErrorCode('/oauth2/authorize', 403, 'access_denied')).toBe('agent_suspended');
  });

  it('shows "page not found" for unknown pages, and keeps JSON for the APIs, OAuth2, discovery and assets', () => {
    expect(browserErrorCode('/settings', 404, 'not_found')).toBe('');
    expect(browserErrorCode('/agents/a/b', 404, 'not_found')).toBe('');
    for (const path of ['/api/nope', '/api', '/oauth2/nope', '/.well-known/nope', '/assets/x.js'])
      expect(browserErrorCode(path, 404, 'not_found'), path).toBeUndefined();
    expect(browserErrorCode('/settings', 400, 'bad request')).toBeUndefined();
  });
});
