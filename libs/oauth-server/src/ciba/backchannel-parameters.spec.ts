import { OAuthError } from '@broker/domain';
import { describe, expect, it } from 'vitest';
import {
  assertSupportedParameters,
  authorizationDetailsText,
  bindingMessage,
  loginHint,
  requestedExpiryMs,
  requestedScopes,
} from './backchannel-parameters';

function form(entries: Record<string, string>): ReadonlyMap<string, string> {
  return new Map(Object.entries(entries));
}

function refusal(run: () => unknown): { code: string; description: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    return { code: (error as OAuthError).code, description: (error as OAuthError).description };
  }
  throw new Error('expected a refusal');
}

describe('backchannel authentication parameters (OpenID CIBA Core 1.0 §7.1)', () => {
  it.each(['request', 'login_hint_token', 'id_token_hint', 'user_code'])(
    'refuses %s with invalid_request naming it',
    (name) => {
      expect(refusal(() => assertSupportedParameters(form({ login_hint: 'alice', [name]: 'x' })))).toEqual({
        code: 'invalid_request',
        description: `${name} is not supported: name the person with login_hint`,
      });
    },
  );

  it('requires login_hint, and takes a request that names the person with it', () => {
    expect(refusal(() => assertSupportedParameters(form({})))).toEqual({
      code: 'invalid_request',
      description: 'login_hint is required',
    });
    expect(refusal(() => assertSupportedParameters(form({ login_hint: '' }))).code).toBe('invalid_request');
    expect(() =>
      assertSupportedParameters(form({ login_hint: 'alice', client_notification_token: 't' })),
    ).not.toThrow();
  });

  it('requires authorization_details and refuses more than 64 KiB of UTF-8 with invalid_authorization_details', () => {
    expect(refusal(() => authorizationDetailsText(form({}))).code).toBe('invalid_request');
    const limit = 64 * 1024;
    expect(authorizationDetailsText(form({ authorization_details: 'a'.repeat(limit) }))).toHaveLength(limit);
    expect(refusal(() => authorizationDetailsText(form({ authorization_details: 'a'.repeat(limit + 1) })))).toEqual({
      code: 'invalid_authorization_details',
      description: 'authorization_details is larger than 64 KiB',
    });
    // 3 bytes a character: 21,846 characters are 65,538 bytes.
    const wide = '€'.repeat(21_846);
    expect(refusal(() => authorizationDetailsText(form({ authorization_details: wide }))).code).toBe(
      'invalid_authorization_details',
    );
    expect(authorizationDetailsText(form({ authorization_details: '€'.repeat(21_845) }))).toHaveLength(21_845);
  });

  it('reads scope as a de-duplicated list and refuses openid with invalid_scope', () => {
    expect(requestedScopes(form({}))).toEqual([]);
    expect(requestedScopes(form({ scope: 'pay  pay read' }))).toEqual(['pay', 'read']);
    expect(refusal(() => requestedScopes(form({ scope: 'openid pay' })))).toEqual({
      code: 'invalid_scope',
      description: 'this server issues no ID tokens; ask for the tool call in authorization_details',
    });
  });

  it('takes a binding_message of 1-100 characters without control characters, else invalid_binding_message', () => {
    expect(bindingMessage(form({}))).toBeUndefined();
    expect(bindingMessage(form({ binding_message: 'W4SCT' }))).toBe('W4SCT');
    // Characters, not UTF-16 units: 100 emoji are 200 units.
    expect(bindingMessage(form({ binding_message: '🔑'.repeat(100) }))).toBe('🔑'.repeat(100));
    for (const message of ['', 'x'.repeat(101), 'line\nbreak', 'bell\u0007', 'c1\u0085'])
      expect(refusal(() => bindingMessage(form({ binding_message: message }))).code).toBe('invalid_binding_message');
  });

  it('takes requested_expiry as positive whole seconds up to the maximum, else invalid_request', () => {
    expect(requestedExpiryMs(form({}), 600_000, 3_600_000)).toBe(600_000);
    expect(requestedExpiryMs(form({ requested_expiry: '1' }), 600_000, 3_600_000)).toBe(1000);
    expect(requestedExpiryMs(form({ requested_expiry: '3600' }), 600_000, 3_600_000)).toBe(3_600_000);
    expect(refusal(() => requestedExpiryMs(form({ requested_expiry: '3601' }), 600_000, 3_600_000))).toEqual({
      code: 'invalid_request',
      description: 'requested_expiry must be at most 3600 seconds',
    });
    for (const value of ['0', '-5', '1.5', '1e3', ' 60', '060', '', 'soon', '99999999999'])
      expect(refusal(() => requestedExpiryMs(form({ requested_expiry: value }), 600_000, 3_600_000)).code).toBe(
        'invalid_request',
      );
  });

  it('looks at a login_hint of at most 1,024 characters only', () => {
    expect(loginHint(form({ login_hint: 'alice@example.com' }))).toBe('alice@example.com');
    expect(loginHint(form({ login_hint: 'a'.repeat(1024) }))).toHaveLength(1024);
    expect(loginHint(form({ login_hint: 'a'.repeat(1025) }))).toBeUndefined();
  });
});
