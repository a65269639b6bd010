import { describe, expect, it } from 'vitest';
import { OFFLINE_SCOPES, scopesAllowedFor } from './scopes-allowed';

describe('scopesAllowedFor', () => {
  const agent = { allowedScopes: ['read', 'write'] };

  it('allows every requested scope when the agent lists none', () => {
    expect(scopesAllowedFor({ allowedScopes: [] }, ['anything', 'offline_access'])).toBe(true);
  });

  it('allows scopes the agent lists, and an empty request', () => {
    expect(scopesAllowedFor(agent, ['read'])).toBe(true);
    expect(scopesAllowedFor(agent, ['write', 'read'])).toBe(true);
    expect(scopesAllowedFor(agent, [])).toBe(true);
  });

  it('refuses a request naming any scope the agent does not list', () => {
    expect(scopesAllowedFor(agent, ['read', 'admin'])).toBe(false);
  });

  it('refuses offline scopes unless the caller reserves them', () => {
    expect(scopesAllowedFor(agent, ['read', 'offline_access'])).toBe(false);
    expect(scopesAllowedFor(agent, ['offline'])).toBe(false);
    expect(scopesAllowedFor(agent, ['read', 'offline', 'offline_access'], { reserved: OFFLINE_SCOPES })).toBe(true);
    expect(scopesAllowedFor(agent, ['offline_access', 'admin'], { reserved: OFFLINE_SCOPES })).toBe(false);
  });
});
