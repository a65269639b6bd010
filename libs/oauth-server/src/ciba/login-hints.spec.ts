import { ConfigError, parseConfig } from '@broker/config';
import type { Agent } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import { LoginHints } from './login-hints';

const KEY = Buffer.alloc(32, 7).toString('base64');

function hints(expression: string): LoginHints {
  const { config } = parseConfig(
    {
      encryption: { keys: [{ id: 'k1', key: KEY }] },
      third_party_oauth2: { jwe_keys: [{ id: 'j1', key: KEY }] },
      oauth2_authorization_server: { ciba: { enabled: true, login_hint: { expression } } },
    },
    {},
  );
  return new LoginHints(config);
}

const AGENT = { id: '6f1c2f0e-8f0a-4d7b-9c1e-2a3b4c5d6e7f', displayName: 'Payments Agent' } as Agent;

describe('the login_hint expression (OpenID CIBA Core 1.0 §7.1)', () => {
  it('takes the hint as the principal by default, trimmed', () => {
    expect(hints('login_hint').principalOf('  alice@example.com ', AGENT)).toBe('alice@example.com');
  });

  it('maps the hint with CEL over login_hint and client', () => {
    const mapped = hints('client.name == "Payments Agent" ? login_hint + "@example.com" : ""');
    expect(mapped.principalOf('alice', AGENT)).toBe('alice@example.com');
    expect(mapped.principalOf('alice', { ...AGENT, displayName: 'Other' })).toBeUndefined();
    expect(hints('client.id').principalOf('x', AGENT)).toBe(AGENT.id);
  });

  it('names nobody for a result that is not a principal, or an evaluation error', () => {
    expect(hints('login_hint').principalOf('   ', AGENT)).toBeUndefined();
    expect(hints('login_hint').principalOf('a'.repeat(201), AGENT)).toBeUndefined();
    expect(hints('login_hint').principalOf('alice\u0000', AGENT)).toBeUndefined();
    expect(hints('size(login_hint)').principalOf('alice', AGENT)).toBeUndefined();
    expect(hints('{"a": 1}[login_hint]').principalOf('alice', AGENT)).toBeUndefined();
  });

  it('stops start-up on an expression that does not compile, naming the key', () => {
    expect(() => hints('login_hint +')).toThrow(ConfigError);
    expect(() => hints('login_hint +')).toThrow(/oauth2_authorization_server\.ciba\.login_hint\.expression/);
  });
});
