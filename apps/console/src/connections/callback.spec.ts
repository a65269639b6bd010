import { describe, expect, it } from 'vitest';
import { explainCallbackError, isKnownCallbackError, readCallback } from './callback';

describe("the third-party callback's failures in words", () => {
  it('tells apart the person cancelling, the provider refusing, the provider unreachable and the broker failing', () => {
    const words = ['access_denied', 'token_exchange_failed', 'provider_unreachable', 'broker_error'].map((code) =>
      explainCallbackError(code, 'Mail'),
    );
    expect(new Set(words).size).toBe(4);
    expect(words[0]).toMatch(/^The connection was cancelled at Mail/);
    expect(words[1]).toMatch(/^Mail refused to complete the connection/);
    expect(words[2]).toMatch(/^Mail could not be reached/);
    expect(words[2]).not.toMatch(/refused/);
    expect(words[3]).toMatch(/^The broker could not complete the connection/);
  });

  it('says "the provider" without a service name, and never the code as the sentence', () => {
    expect(explainCallbackError('access_denied')).toMatch(/^The connection was cancelled at the provider/);
    expect(explainCallbackError('provider_unreachable')).toMatch(/^The provider could not be reached/);
    for (const code of [
      'access_denied',
      'token_exchange_failed',
      'provider_unreachable',
      'broker_error',
      'invalid_state',
    ])
      expect(explainCallbackError(code)).not.toContain(code);
  });

  it('an unknown code is not echoed: a general sentence', () => {
    expect(isKnownCallbackError('call_555_0100')).toBe(false);
    expect(readCallback(new URLSearchParams('error=call_555_0100&error_description=x'))).toEqual({
      kind: 'error',
      code: null,
      serviceId: null,
    });
    expect(readCallback(new URLSearchParams('error=provider_unreachable&service_id=s1'))).toEqual({
      kind: 'error',
      code: 'provider_unreachable',
      serviceId: 's1',
    });
    expect(explainCallbackError(null, 'Mail')).toBe(
      'Mail reported an error. Nothing was stored; try connecting again.',
    );
  });
});
