import { describe, expect, it } from 'vitest';
import { HUES, hueOf, initialOf } from './hue';

describe('hueOf and initialOf: coloured initials', () => {
  it('gives a name always the same colour, within the palette, and different names different colours', () => {
    expect(hueOf('Mail')).toBe(hueOf('Mail'));
    for (const name of ['Mail', 'Calendar', 'alice@example.com', '', 'Ünïcode 名前']) {
      expect(hueOf(name)).toBeGreaterThanOrEqual(0);
      expect(hueOf(name)).toBeLessThan(HUES);
    }
    expect(new Set(['Mail Sorter', 'Mail', 'Calendar', 'alice@example.com'].map(hueOf)).size).toBeGreaterThanOrEqual(3);
  });

  it('takes a whole first character, upper case', () => {
    expect(initialOf('mail')).toBe('M');
    expect(initialOf('  calendar')).toBe('C');
    expect(initialOf('😀 bot')).toBe('😀');
    expect(initialOf('')).toBe('?');
  });
});
