import { describe, expect, it } from 'vitest';
import { ApiFailure } from '../api/client';
import { readConsentParams, requestAddress } from './consent-params';
import { requestedScopes } from './navigation';
import { isExpiredRefusal, isPast, requestDeadline } from './request-expiry';

describe("the consent page's address: a request's token, its mark, and what it asks for", () => {
  it('an address with a session_token is a request, and marked so', () => {
    expect(readConsentParams('?session_token=abc')).toMatchObject({ sessionToken: 'abc', marked: true });
  });

  it('the mark without a token (a copied or reopened address, no request kept here) is a lost request', () => {
    expect(readConsentParams('?request=1')).toMatchObject({ sessionToken: null, marked: true });
    expect(readConsentParams(new URL(requestAddress('a b'), 'https://c.example').search)).toMatchObject({
      marked: true,
    });
  });

  it("the agent's own page (neither token nor mark) is not a request", () => {
    expect(readConsentParams('')).toMatchObject({ sessionToken: null, marked: false });
    expect(readConsentParams('?session_token=')).toMatchObject({ sessionToken: null, marked: false });
  });

  it('the scopes a request names, from its scope parameter (RFC 6749 §3.3); none when it names none', () => {
    const url = (query: string) => `https://broker.example/oauth2/authorize?client_id=x${query}`;
    expect([...(requestedScopes(url('&scope=tickets.read%20mail.read')) ?? [])]).toEqual(['tickets.read', 'mail.read']);
    expect(requestedScopes(url(''))).toBeUndefined();
    expect(requestedScopes(url('&scope=%20'))).toBeUndefined();
    expect(requestedScopes('not a url')).toBeUndefined();
    expect(requestedScopes(undefined)).toBeUndefined();
  });
});

describe("a request's time: counted from the page's read, by the broker's seconds left", () => {
  it('ends expires_in seconds after the read, whatever the clocks say the time is', () => {
    expect(requestDeadline(1_000, 600)).toBe(601_000);
    expect(requestDeadline(1_000, 0)).toBe(1_000);
  });

  it('is past only once its deadline is reached, and never without one', () => {
    expect(isPast(Date.now() - 1)).toBe(true);
    expect(isPast(Date.now() + 60_000)).toBe(false);
    expect(isPast(null)).toBe(false);
    expect(isPast(undefined)).toBe(false);
  });

  it('a refusal as expired is 400 session_expired only', () => {
    expect(isExpiredRefusal(new ApiFailure(400, 'session_expired', 'expired'))).toBe(true);
    expect(isExpiredRefusal(new ApiFailure(409, 'session_used', 'used'))).toBe(false);
    expect(isExpiredRefusal(new Error('network'))).toBe(false);
  });
});
