import { describe, expect, it } from 'vitest';
import { parseRfc3339DateTime } from './date-time';

describe('parseRfc3339DateTime', () => {
  it('reads RFC 3339 date-times with a time zone exactly as written', () => {
    expect(parseRfc3339DateTime('2030-01-01T00:00:00Z')?.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(parseRfc3339DateTime('2032-02-29T23:59:59.5+02:00')?.toISOString()).toBe('2032-02-29T21:59:59.500Z');
    expect(parseRfc3339DateTime('2000-02-29t12:00:00z')?.toISOString()).toBe('2000-02-29T12:00:00.000Z');
    expect(parseRfc3339DateTime('2030-12-31T23:59:59-23:59')?.toISOString()).toBe('2031-01-01T23:58:59.000Z');
  });

  it('refuses impossible calendar dates that Date.parse would roll over', () => {
    for (const value of [
      '2030-02-30T00:00:00Z',
      '2031-02-29T00:00:00Z',
      '1900-02-29T00:00:00Z',
      '2030-04-31T00:00:00Z',
      '2030-06-31T00:00:00Z',
      '2030-00-10T00:00:00Z',
      '2030-13-01T00:00:00Z',
      '2030-01-00T00:00:00Z',
      '2030-01-32T00:00:00Z',
    ]) {
      expect(parseRfc3339DateTime(value), value).toBeUndefined();
    }
  });

  it('refuses impossible times, offsets, leap seconds and other shapes', () => {
    for (const value of [
      '2030-01-01T24:00:00Z',
      '2030-01-01T00:60:00Z',
      '2030-01-01T00:00:60Z',
      '2030-01-01T00:00:00+24:00',
      '2030-01-01T00:00:00+01:60',
      '2030-01-01T00:00:00',
      '2030-01-01',
      '2030-01-01 00:00:00Z',
      '+02030-01-01T00:00:00Z',
      'tomorrow',
    ]) {
      expect(parseRfc3339DateTime(value), value).toBeUndefined();
    }
  });
});
