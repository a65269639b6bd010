import { describe, expect, it } from 'vitest';
import { matchesSearch } from './search';

const agent = {
  id: '6f1c2d0e-8a4b-4c5d-9e7f-0a1b2c3d4e5f',
  display_name: 'Expense Assistant',
  canonical_id: 'expense-assistant',
  client_id: 'upstream-exp-42',
};

describe('matchesSearch', () => {
  it('matches every agent when nothing is typed', () => {
    expect(matchesSearch(agent, '')).toBe(true);
    expect(matchesSearch(agent, '   ')).toBe(true);
  });

  it('finds an agent by its name, case-insensitively', () => {
    expect(matchesSearch(agent, 'expense ASSIST')).toBe(true);
  });

  it('finds an agent by its canonical id, its upstream client id or its id', () => {
    expect(matchesSearch(agent, 'expense-assistant')).toBe(true);
    expect(matchesSearch(agent, 'exp-42')).toBe(true);
    expect(matchesSearch(agent, '6f1c2d0e')).toBe(true);
  });

  it('needs every word typed to appear', () => {
    expect(matchesSearch(agent, 'expense calendar')).toBe(false);
  });

  it('does not match on an absent canonical id or client id', () => {
    expect(matchesSearch({ ...agent, canonical_id: null, client_id: null }, 'upstream')).toBe(false);
  });
});
