import { describe, expect, it } from 'vitest';
import { clientUriProblem, isClientDocumentUrl, matchesClientUri, redirectHostOf } from './client-uri';

describe('clientUriProblem (agent client_uris entries)', () => {
  it('accepts exact https document URLs and whole-segment path wildcards on a fixed origin', () => {
    for (const ok of [
      'https://vscode.dev/oauth/client-metadata.json',
      'https://agent.example.com:8443/tenants/*/client.json',
      'https://agent.example.com/*/*/c.json',
      'https://agent.example.com/c.json?v=1',
      'https://[::1]/c.json',
    ]) {
      expect(clientUriProblem(ok), ok).toBeUndefined();
    }
  });

  it('refuses host and port wildcards, other schemes, dot segments, user info, fragments and non-normal forms', () => {
    const cases: [string, RegExp][] = [
      ['https://*/x', /never in the host/],
      ['https://*.example.com/x', /never in the host/],
      ['https://a-*.example.com/x', /never in the host/],
      ['http://agent.example.com/x', /https/],
      ['ftp://agent.example.com/x', /https/],
      ['https://agent.example.com/t-*/x', /whole path segment/],
      ['https://agent.example.com/x?t=*', /whole path segment/],
      ['https://agent.example.com/a/../x', /path segments/],
      ['https://agent.example.com/a/%2E%2e/x', /path segments/],
      ['https://agent.example.com/a/./x', /path segments/],
      ['https://u:p@agent.example.com/x', /user info/],
      ['https://agent.example.com/x#f', /fragment/],
      ['https://Agent.example.com/x', /normal form \(https:\/\/agent\.example\.com\)/],
      ['https://agent.example.com:443/x', /normal form/],
      ['https://agent.example.com', /followed by a path/],
      ['https://agent.example.com/a b', /normal form/],
      ['https://agent.example.com/a\\b', /normal form/],
      ['not a url', /https/],
    ];
    for (const [value, problem] of cases) expect(clientUriProblem(value), value).toMatch(problem);
  });
});

describe('isClientDocumentUrl', () => {
  it('takes only https URLs in normal form, without dot segments', () => {
    expect(isClientDocumentUrl('https://agent.example.com/tenants/a/client.json')).toBe(true);
    for (const bad of [
      'https://agent.example.com/tenants/%2e%2e/client.json',
      'https://agent.example.com/tenants/../client.json',
      'https://agent.example.com/tenants/./client.json',
      'https://AGENT.example.com/c.json',
      'https://agent.example.com',
      'http://agent.example.com/c.json',
      'https://u@agent.example.com/c.json',
      'https://agent.example.com/c.json#x',
      'https://agent.example.com/a\\..\\c.json',
    ]) {
      expect(isClientDocumentUrl(bad), bad).toBe(false);
    }
  });
});

describe('matchesClientUri', () => {
  const pattern = 'https://agent.example.com/tenants/*/client.json';

  it('matches an exact entry and one ordinary segment per *', () => {
    expect(matchesClientUri('https://agent.example.com/c.json', 'https://agent.example.com/c.json')).toBe(true);
    expect(matchesClientUri(pattern, 'https://agent.example.com/tenants/acme/client.json')).toBe(true);
    expect(matchesClientUri(pattern, "https://agent.example.com/tenants/a.b_c~d-e!$&'()+,;=:@/client.json")).toBe(true);
  });

  it('never lets a * segment be a dot segment or percent-encoded, nor span segments, origins or queries', () => {
    for (const url of [
      'https://agent.example.com/tenants/%2e%2e/client.json',
      'https://agent.example.com/tenants/%2E%2E/client.json',
      'https://agent.example.com/tenants/../client.json',
      'https://agent.example.com/tenants/./client.json',
      'https://agent.example.com/tenants/a%2F..%2Fb/client.json',
      'https://agent.example.com/tenants/a%5C..%5Cb/client.json',
      'https://agent.example.com/tenants//client.json',
      'https://agent.example.com/tenants/a/b/client.json',
      'https://agent.example.com/tenants/*/client.json',
      'https://evil.example.com/tenants/acme/client.json',
      'https://agent.example.com:8443/tenants/acme/client.json',
      'https://agent.example.com/tenants/acme/client.json?x=1',
    ]) {
      expect(matchesClientUri(pattern, url), url).toBe(false);
    }
  });

  it('never matches an entry stored before the rule with a host wildcard or http', () => {
    expect(matchesClientUri('https://*/client.json', 'https://evil.example.com/client.json')).toBe(false);
    expect(matchesClientUri('https://*.example.com/client.json', 'https://evil.example.com/client.json')).toBe(false);
    expect(matchesClientUri('http://agent.example.com/c.json', 'http://agent.example.com/c.json')).toBe(false);
  });
});

describe('redirectHostOf', () => {
  it('is the host name without port, or the private-use scheme', () => {
    expect(redirectHostOf('https://Agent.Example.com:8443/cb')).toBe('agent.example.com');
    expect(redirectHostOf('http://127.0.0.1:51234/cb')).toBe('127.0.0.1');
    expect(redirectHostOf('com.example.app:/cb')).toBe('com.example.app');
  });
});
