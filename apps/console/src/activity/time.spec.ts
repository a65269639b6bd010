import { describe, expect, it } from 'vitest';
import { dayHeading, localDay } from './time';

describe('activity days', () => {
  const now = new Date(2026, 10, 27, 10, 30);

  it("groups by the person's own calendar day", () => {
    expect(localDay(new Date(2026, 10, 27, 0, 5))).toBe('2026-11-27');
    expect(localDay(new Date(2026, 10, 26, 23, 55).toISOString())).toBe('2026-11-26');
  });

  it('names today and yesterday, and other days by their date', () => {
    expect(dayHeading('2026-11-27', now)).toBe('Today');
    expect(dayHeading('2026-11-26', now)).toBe('Yesterday');
    const older = dayHeading('2026-11-03', now);
    expect(older).toContain('2026');
    expect(older).toContain('3');
    // Across a month boundary.
    expect(dayHeading('2026-11-30', new Date(2026, 11, 1, 8))).toBe('Yesterday');
  });
});
