import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argumentsHash, canonicalJson } from './canonical-json';

describe('canonical JSON (RFC 8785 for JSON values)', () => {
  it('sorts keys at every depth and drops whitespace, keeping array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}',
    );
  });

  it('sorts keys by UTF-16 code units and serialises numbers and strings like JSON.stringify', () => {
    expect(canonicalJson({ '\u20ac': 1, '\ud83d\ude00': 2, a: 3 })).toBe('{"a":3,"\u20ac":1,"\ud83d\ude00":2}');
    expect(canonicalJson([1.0, -0, 1e21, 0.1, 'line\nbreak', '\u0000'])).toBe(
      '[1,0,1e+21,0.1,"line\\nbreak","\\u0000"]',
    );
  });

  it('hashes the canonical text: key order does not change arguments_hash', () => {
    const expected = createHash('sha256').update('{"a":1,"b":"two"}').digest('hex');
    expect(argumentsHash({ b: 'two', a: 1 })).toBe(expected);
    expect(argumentsHash({ a: 1, b: 'two' })).toBe(expected);
    expect(argumentsHash({ a: 1, b: 'three' })).not.toBe(expected);
  });
});
