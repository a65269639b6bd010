import { describe, expect, it } from 'vitest';
import { sqlOperation } from './sql-operation';

describe('sqlOperation (a statement span names its operation, never its values)', () => {
  it('is the first keyword, upper-cased', () => {
    expect(sqlOperation('select * from agents where id = $1')).toBe('SELECT');
    expect(sqlOperation('  INSERT INTO "grants" ("id") VALUES ($1)')).toBe('INSERT');
    expect(sqlOperation('START TRANSACTION')).toBe('START');
  });

  it('is OTHER when the text does not start with a keyword, so a literal can never become the name', () => {
    expect(sqlOperation("'alice@example.com'")).toBe('OTHER');
    expect(sqlOperation('(SELECT 1)')).toBe('OTHER');
    expect(sqlOperation('')).toBe('OTHER');
    expect(sqlOperation('x'.repeat(40))).toBe('OTHER');
  });
});
