import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error';
import { parseConfig } from './load-config';

const KEY = Buffer.alloc(32, 7).toString('base64');
const KEYS = {
  encryption: { keys: [{ id: 'k1', key: KEY }] },
  third_party_oauth2: { jwe_keys: [{ id: 'j1', key: KEY }] },
};
const ISSUER = { issuer_uri: 'https://acme.okta.example', jwks_uri: 'https://acme.okta.example/v1/keys' };

function parse(enterprise: Record<string, unknown>, mode = 'local') {
  const proxy = {
    upstream_authorize_endpoint: 'https://up.example.com/a',
    upstream_token_endpoint: 'https://up.example.com/t',
    upstream_jwks_uri: 'https://up.example.com/j',
  };
  return parseConfig({ ...KEYS, oauth2_authorization_server: { mode, proxy, enterprise } }, {}).config
    .oauth2_authorization_server.enterprise;
}

function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected a config error');
}

describe('enterprise-managed authorization configuration', () => {
  it('is off by default, and takes one issuer or a list, with its defaults', () => {
    expect(parse({})).toEqual({ trusted_issuers: [], max_assertion_lifetime: 300_000 });
    const one = parse({ trusted_issuers: ISSUER, max_assertion_lifetime: '2m' });
    expect(one).toEqual({
      trusted_issuers: [
        {
          ...ISSUER,
          discovery: false,
          allowed_algorithms: ['ES256', 'RS256'],
          principal_expression: 'id_jag.sub',
        },
      ],
      max_assertion_lifetime: 120_000,
    });
    const two = parse({
      trusted_issuers: [
        ISSUER,
        { issuer_uri: 'https://login.example.com/tenant', discovery: true, allowed_algorithms: 'RS256', tenant: 't1' },
      ],
    });
    expect(two.trusted_issuers[1]).toMatchObject({ discovery: true, allowed_algorithms: ['RS256'], tenant: 't1' });
  });

  it('is refused in proxy mode, and allowed in hybrid mode', () => {
    expect(configError(() => parse({ trusted_issuers: ISSUER }, 'proxy'))).toBe(
      'config error: oauth2_authorization_server.enterprise is available only in local and hybrid modes (mode is proxy)',
    );
    expect(parse({ trusted_issuers: ISSUER }, 'hybrid').trusted_issuers).toHaveLength(1);
  });

  it('needs exactly one of jwks_uri and discovery, unique issuers, asymmetric algorithms and a positive lifetime', () => {
    expect(configError(() => parse({ trusted_issuers: { issuer_uri: ISSUER.issuer_uri } }))).toBe(
      'config error: oauth2_authorization_server.enterprise.trusted_issuers[0] needs jwks_uri, or discovery: true to read it from the issuer metadata',
    );
    expect(configError(() => parse({ trusted_issuers: { ...ISSUER, discovery: true } }))).toBe(
      'config error: oauth2_authorization_server.enterprise.trusted_issuers[0] has both jwks_uri and discovery: true; keep one',
    );
    expect(configError(() => parse({ trusted_issuers: [ISSUER, ISSUER] }))).toMatch(
      /trusted_issuers\[1\]\.issuer_uri "https:\/\/acme\.okta\.example" is listed by an earlier trusted issuer/,
    );
    expect(configError(() => parse({ trusted_issuers: { ...ISSUER, allowed_algorithms: ['HS256'] } }))).toMatch(
      /allowed_algorithms/,
    );
    expect(configError(() => parse({ trusted_issuers: { ...ISSUER, issuer_uri: 'not a url' } }))).toMatch(/issuer_uri/);
    expect(configError(() => parse({ trusted_issuers: ISSUER, max_assertion_lifetime: '0s' }))).toMatch(
      /max_assertion_lifetime must be a duration/,
    );
    expect(configError(() => parse({ trusted_issuers: { ...ISSUER, unknown: 1 } }))).toMatch(
      /unknown is not a known key/,
    );
  });
});
