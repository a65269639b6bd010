import { describe, expect, it } from 'vitest';
import {
  canonicalIdProblem,
  isHttpsOrLoopbackUrl,
  isHttpUrl,
  isRedirectUri,
  isResourceIndicatorEntry,
  normaliseResourceUri,
  parseAbsoluteUrl,
} from './resource-uri';

describe('normaliseResourceUri', () => {
  it('strips trailing slashes and lower-cases scheme and host, keeping path case', () => {
    expect(normaliseResourceUri('https://API.Example.COM/v1/')).toBe('https://api.example.com/v1');
    expect(normaliseResourceUri('HTTPS://api.example.com//')).toBe('https://api.example.com');
    expect(normaliseResourceUri('https://api.example.com/V1/Items')).toBe('https://api.example.com/V1/Items');
    expect(normaliseResourceUri('https://api.example.com:443/x')).toBe('https://api.example.com/x');
    expect(normaliseResourceUri('http://localhost:8080/x?tenant=a')).toBe('http://localhost:8080/x?tenant=a');
  });

  it('rejects relative, non-http, fragment and user-info URIs', () => {
    for (const bad of [
      '/relative',
      'api.example.com',
      'ftp://x.example.com',
      'https://x.example.com/#frag',
      'https://user:pw@x.example.com',
      'https://x .com',
      '',
    ]) {
      expect(normaliseResourceUri(bad)).toBeUndefined();
    }
  });
});

describe('isResourceIndicatorEntry', () => {
  it('accepts absolute URIs (exact) and http(s) prefixes ending in / written as their origin', () => {
    for (const good of [
      'https://mcp.example.com/mcp',
      'http://127.0.0.1:8931/mcp',
      'urn:example:mcp',
      'https://tools.example.com/',
      'https://tools.example.com/team/',
      'https://mcp.example.com/x?tenant=1',
    ]) {
      expect(isResourceIndicatorEntry(good), good).toBe(true);
    }
  });

  it('refuses relative references, fragments, user info, white space and prefixes that could span origins', () => {
    for (const bad of [
      '/mcp',
      'mcp.example.com',
      'https://mcp.example.com/#f',
      'https://u:p@mcp.example.com/',
      'https://mcp.example.com/a b',
      'https://mcp.example.com/a\u0001',
      'urn:example:x/',
      'HTTPS://MCP.example.com/',
      'https://mcp.example.com:443/',
      '',
    ]) {
      expect(isResourceIndicatorEntry(bad), bad).toBe(false);
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

describe('isRedirectUri: schemes a browser may be sent to', () => {
  it('accepts https, http on loopback only, and RFC 8252 private-use (reverse-domain) schemes', () => {
    for (const good of [
      'https://app.example.com/cb?x=1',
      'http://127.0.0.1/cb',
      'http://127.8.9.10:8080/cb',
      'http://[::1]:9000/cb',
      'http://localhost:3000/cb',
      'com.example.app:/oauth2redirect',
      'com.example.app://cb',
    ]) {
      expect(isRedirectUri(good), good).toBe(true);
    }
  });

  it('refuses javascript:, data:, vbscript:, file: and other schemes without a dot, and http off loopback', () => {
    const bad = [
      'javascript:alert(document.domain)//x',
      'JavaScript:alert(1)',
      'javascript://app.example.com/%0aalert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'blob:https://app.example.com/x',
      'about:blank',
      'mailto:a@example.com',
      'myapp:/cb',
      'http://app.example.com/cb',
      'http://127.0.0.1.evil.example/cb',
      'http://localhost.evil.example/cb',
      'https://app.example.com/c\nb',
    ];
    for (const value of bad) expect(isRedirectUri(value), value).toBe(false);
  });
});

describe('isHttpsOrLoopbackUrl (logos, documentation links)', () => {
  it('accepts https anywhere and http on loopback only', () => {
    for (const good of [
      'https://cdn.example.com/logo.png',
      'http://127.0.0.1:8080/logo.png',
      'http://localhost/logo.png',
      'http://[::1]/logo.png',
    ])
      expect(isHttpsOrLoopbackUrl(good), good).toBe(true);
  });

  it('refuses javascript:, data:, vbscript:, file:, private-use schemes and http off loopback', () => {
    for (const bad of [
      'javascript:alert(1)',
      'data:image/svg+xml,<svg onload=alert(1)>',
      'vbscript:x',
      'file:///etc/passwd',
      'com.example.app:/logo',
      'http://cdn.example.com/logo.png',
      '/logo.png',
      '',
    ]) {
      expect(isHttpsOrLoopbackUrl(bad), bad).toBe(false);
    }
  });
});

describe('isHttpUrl (the one http(s) URL check)', () => {
  it('accepts absolute http and https URLs with a host', () => {
    for (const good of ['https://broker.example.com', 'http://localhost:8000/x', 'https://u:p@idp.example.com/jwks'])
      expect(isHttpUrl(good)).toBe(true);
    expect(isHttpUrl(new URL('https://idp.example.com'))).toBe(true);
  });

  it('refuses relative, unparseable and non-http(s) URLs', () => {
    for (const bad of [
      '/relative',
      'broker.example.com',
      '',
      'ftp://x.example.com',
      'urn:example:x',
      'javascript:alert(1)',
      'file:///etc/passwd',
    ])
      expect(isHttpUrl(bad)).toBe(false);
  });

  it('refuses user info when asked (configured URLs carry no credentials)', () => {
    expect(isHttpUrl('https://u:p@broker.example.com', { userInfo: false })).toBe(false);
    expect(isHttpUrl('https://u@broker.example.com', { userInfo: false })).toBe(false);
    expect(isHttpUrl('https://broker.example.com', { userInfo: false })).toBe(true);
  });
});

describe('parseAbsoluteUrl', () => {
  it('parses absolute URLs of any scheme and answers undefined for the rest', () => {
    expect(parseAbsoluteUrl('spiffe://trust.example/agent')?.host).toBe('trust.example');
    expect(parseAbsoluteUrl('/relative')).toBeUndefined();
  });
});
