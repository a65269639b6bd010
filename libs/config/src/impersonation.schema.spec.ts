import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error';
import { parseConfig } from './load-config';

const KEY = Buffer.alloc(32, 7).toString('base64');
const KEYS = {
  encryption: { keys: [{ id: 'k1', key: KEY }] },
  third_party_oauth2: { jwe_keys: [{ id: 'j1', key: KEY }] },
};
const PREFIX = 'https://broker.example.com/impersonation';
const issuer = {
  issuer_uri: 'https://idp.example.com',
  jwks_uri: 'https://idp.example.com/jwks',
  signs_roles: ['client_assertion', 'actor', 'subject'],
};
const rule = (overrides: Record<string, unknown> = {}) => ({
  name: 'r',
  roles: {},
  trusted_issuers: [issuer],
  authorization: { cel: { expression: 'true' } },
  ...overrides,
});

function parse(impersonation: Record<string, unknown>, mode = 'local') {
  const proxy = {
    upstream_authorize_endpoint: 'https://up.example.com/a',
    upstream_token_endpoint: 'https://up.example.com/t',
    upstream_jwks_uri: 'https://up.example.com/j',
  };
  return parseConfig({ ...KEYS, oauth2_authorization_server: { mode, proxy, impersonation } }, {}).config
    .oauth2_authorization_server.impersonation;
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

describe('impersonation configuration (validated with the rest of the configuration)', () => {
  it('types a valid rule with its defaults and one-or-many lists', () => {
    const section = parse({
      audience_prefix: PREFIX,
      rules: rule({ trusted_issuers: { ...issuer, signs_roles: ['client_assertion', 'actor', 'subject'] } }),
    });
    expect(section.rules).toHaveLength(1);
    expect(section.rules[0]?.trusted_issuers[0]?.allowed_algorithms).toEqual(['ES256', 'RS256']);
    expect(section.rules[0]?.roles.subject.verification).toBe('jwks');
  });

  it('is available only in local mode, refused when the configuration is loaded', () => {
    expect(configError(() => parse({ audience_prefix: PREFIX, rules: [rule()] }, 'hybrid'))).toBe(
      'config error: oauth2_authorization_server.impersonation is available only in local mode (mode is hybrid)',
    );
  });

  it('names the rule and the key as written for a shape error inside a rule', () => {
    expect(
      configError(() =>
        parse({
          audience_prefix: PREFIX,
          rules: [rule({ trusted_issuers: [issuer, { ...issuer, jwks_uri: 'ftp://idp.example.com/jwks' }] })],
        }),
      ),
    ).toBe(
      'config error: oauth2_authorization_server.impersonation.rules[0] (r).trusted_issuers[1].jwks_uri must be an absolute http(s) URI',
    );
    expect(configError(() => parse({ audience_prefix: PREFIX, rules: rule({ surprise: true }) }))).toMatch(
      /^config error: oauth2_authorization_server\.impersonation\.rules\[0\] \(r\) Unrecognized key/,
    );
  });

  it('reports a rule that is not a mapping at the list, like any other key', () => {
    expect(configError(() => parse({ audience_prefix: PREFIX, rules: ['r'] }))).toMatch(
      /^config error: oauth2_authorization_server\.impersonation\.rules\.0 must be a record/,
    );
  });

  it('requires the prefix once rules are configured, and its form', () => {
    expect(configError(() => parse({ rules: [rule()] }))).toBe(
      'config error: oauth2_authorization_server.impersonation.audience_prefix is required when impersonation rules are configured',
    );
    expect(configError(() => parse({ audience_prefix: 'urn:example:impersonation', rules: [] }))).toBe(
      'config error: oauth2_authorization_server.impersonation.audience_prefix must be an absolute http(s) URI with a host',
    );
  });

  it('refuses a verification: none rule whose issuer signs the subject', () => {
    const none = rule({
      roles: { subject: { verification: 'none' } },
      authorization: { cel: { expression: 'subject_token.sub == "a"' } },
    });
    expect(configError(() => parse({ audience_prefix: PREFIX, rules: [none] }))).toBe(
      'config error: oauth2_authorization_server.impersonation.rules[0] (r).trusted_issuers[0].signs_roles a verification: none rule has no signed subject',
    );
  });
});
