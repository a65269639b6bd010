import { describe, expect, it } from 'vitest';
import { formatTraceresponse, parseTraceparent } from './traceparent';

describe('parseTraceparent', () => {
  it('accepts a version-00 traceparent and keeps its trace id and flags', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentId: '00f067aa0ba902b7',
      flags: '01',
    });
  });

  it('rejects all-zero ids, upper-case hex, version ff, wrong lengths and joined duplicates', () => {
    for (const bad of [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01,00-4bf92f3577b34da6a3ce929d0e0e4737-00f067aa0ba902b7-01',
      '',
    ]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
  });

  it('parses the known fields of a later version (W3C §4.3)', () => {
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentId: '00f067aa0ba902b7',
      flags: '01',
    });
  });

  it('formats traceresponse as version-traceid-spanid-flags', () => {
    expect(formatTraceresponse('a'.repeat(32), 'b'.repeat(16), '00')).toBe(`00-${'a'.repeat(32)}-${'b'.repeat(16)}-00`);
  });
});
