import { storage, Store } from 'nestjs-pino/storage';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { currentTraceId, requestLogger } from './current-trace-id';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const root = pino({ base: { service: 'test' } }, { write: () => undefined });

describe('currentTraceId', () => {
  it('is null outside a request', () => {
    expect(currentTraceId()).toBeNull();
    expect(storage.run(new Store(root), () => currentTraceId())).toBeNull();
  });

  it("is the trace id bound to the request's logger, by requestLogger or by any child binding trace_id", () => {
    const logger = requestLogger(root, TRACE_ID);
    expect(logger.bindings()).toEqual({ service: 'test', trace_id: TRACE_ID });
    expect(storage.run(new Store(logger), () => [currentTraceId(), currentTraceId()])).toEqual([TRACE_ID, TRACE_ID]);
    const other = root.child({ trace_id: 'f'.repeat(32) });
    expect(storage.run(new Store(other), () => [currentTraceId(), currentTraceId()])).toEqual([
      'f'.repeat(32),
      'f'.repeat(32),
    ]);
    // A logger given more bindings (nestjs-pino's assign) is another object, read afresh.
    expect(storage.run(new Store(other.child({ trace_id: TRACE_ID })), () => currentTraceId())).toBe(TRACE_ID);
  });
});
