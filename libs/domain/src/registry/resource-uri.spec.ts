import { describe, expect, it } from 'vitest';
import { canonicalIdProblem, isRedirectUri, normaliseResourceUri } from './resource-uri';

describe('normaliseResourceUri', () => {
  it('strips trailing slashes and lower-cases scheme and host, keeping path case', () => {
    expect(normaliseResourceUri('https://API.Example.COM/v1/')).toBe('https://api.example.com/v1');
    expect(normaliseResourceUri('HTTPS://api.example.com//')).toBe('https://api.example.com');
    expect(normaliseResourceUri('https://api.example.com/V1/Items')).toBe('https://api.example.com/V1/Items');
    expect(normaliseResourceUri('https://api.example.com:443/x')).toBe('https://api.example.com/x');
    expect(normaliseResourceUri('http://localhost:8080/x?tenant=a')).toBe('http://localhost:8080/x?tenant=a');
  });

  it('rejects relative, non-http, fragment and user-info URIs', () => {
    for (const bad of ['/relative', 'api.example.com', 'ftp://x.example.com', 'https://x.example.com/#frag', 'https://user:pw@x.example.com', 'https://x .com', '']) {
      expect(normaliseResourceUri(bad)).toBeUndefined();
    }
  });
});

describe('canonicalIdProblem', () => {
  it('accepts 1-128 of [A-Za-z0-9._-] that is not UUID-shaped', () => {
    expect(canonicalIdProblem('calendar-agent_v2.1')).toBeUndefined();
    expect(canonicalIdProblem('a'.repeat(128))).toBeUndefined();
    expect(canonicalIdProblem('a'.repeat(129))).toMatch(/1-128/);
    expect(canonicalIdProblem('has space')).toMatch(/1-128/);
    expect(canonicalIdProblem('')).toMatch(/1-128/);
    expect(canonicalIdProblem('3F2504E0-4F89-11D3-9A0C-0305E82C3301')).toMatch(/UUID/);
  });
});

describe('isRedirectUri', () => {
  it('accepts absolute URIs without fragment, including private-use schemes', () => {
    expect(isRedirectUri('https://app.example.com/cb')).toBe(true);
    expect(isRedirectUri('http://127.0.0.1:9000/cb')).toBe(true);
    expect(isRedirectUri('com.example.app:/oauth2redirect')).toBe(true);
    expect(isRedirectUri('https://app.example.com/cb#x')).toBe(false);
    expect(isRedirectUri('/cb')).toBe(false);
  });
});
