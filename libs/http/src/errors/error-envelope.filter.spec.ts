import { LogCapture, testConfig } from '@broker/testing';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logging/create-logger';
import { ErrorEnvelopeFilter } from './error-envelope.filter';
import { answersTo, ErrorVocabulary } from './error-vocabulary';

class WidgetError extends Error {
  constructor(
    readonly code: 'widget_taken' | 'widget_gone' | 'widget_busy',
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

const vocabulary = new ErrorVocabulary([
  answersTo(WidgetError, {
    widget_taken: 'conflict',
    widget_gone: { error: 'not_found', message: (error) => `no widget (${error.message})` },
    widget_busy: 'rate_limited',
  }),
]);

function filter(): ErrorEnvelopeFilter {
  return new ErrorEnvelopeFilter('enduser', createLogger(testConfig(), new LogCapture()), undefined, vocabulary);
}

const request = (path: string) => ({ traceId: 'trace-1', method: 'POST', path });

describe('ErrorEnvelopeFilter with the app vocabulary', () => {
  it("answers a library's coded refusal on an API route as the vocabulary says: status, code, message, Retry-After", () => {
    expect(filter().answer(new WidgetError('widget_taken', 'widget w1 is taken'), request('/api/widgets'))).toEqual({
      status: 409,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ error: 'conflict', message: 'widget w1 is taken' }),
    });
    expect(
      JSON.parse(filter().answer(new WidgetError('widget_gone', 'w2'), request('/api/widgets')).body) as unknown,
    ).toEqual({ error: 'not_found', message: 'no widget (w2)' });
    const busy = filter().answer(new WidgetError('widget_busy', 'slow down', 7), request('/api/widgets'));
    expect([busy.status, busy.headers['Retry-After']]).toEqual([429, '7']);
  });

  it('leaves the OAuth2 endpoints and every other failure alone (an unknown error stays a 500 without detail)', () => {
    const oauth = filter().answer(new WidgetError('widget_taken', 'widget w1 is taken'), request('/oauth2/token'));
    expect([oauth.status, JSON.parse(oauth.body)]).toEqual([
      500,
      { error: 'server_error', error_description: 'internal error (ref trace-1)' },
    ]);
    const other = filter().answer(new Error('database down'), request('/api/widgets'));
    expect([other.status, JSON.parse(other.body)]).toEqual([
      500,
      { error: 'internal error', message: 'internal error (ref trace-1)' },
    ]);
  });
});
