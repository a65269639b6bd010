import { describe, expect, it } from 'vitest';
import { NO_FILTERS, filtersFromSearch, filtersToSearch, type FilterState } from './filter-state';

describe('activity filters in the page address', () => {
  it('round-trips every filter, and a page without filters has no query', () => {
    const filters: FilterState = {
      agent: 'a1',
      service: 's1',
      kind: 'consent.denied',
      range: 'custom',
      fromDay: '2026-11-01',
      toDay: '2026-11-20',
    };
    const search = filtersToSearch(filters);
    expect(search.toString()).toBe(
      'agent=a1&service=s1&kind=consent.denied&range=custom&from=2026-11-01&to=2026-11-20',
    );
    expect(filtersFromSearch(new URLSearchParams(search.toString()))).toEqual(filters);
    expect(filtersToSearch(NO_FILTERS).toString()).toBe('');
    expect(filtersFromSearch(new URLSearchParams(''))).toEqual(NO_FILTERS);
  });

  it('ignores what it does not know: a kind, a range, a malformed day, days without the custom range', () => {
    expect(filtersFromSearch(new URLSearchParams('kind=nope&range=forever&from=yesterday'))).toEqual(NO_FILTERS);
    expect(filtersFromSearch(new URLSearchParams('range=7d&from=2026-11-01'))).toEqual({ ...NO_FILTERS, range: '7d' });
    expect(filtersFromSearch(new URLSearchParams('kind=__proto__'))).toEqual(NO_FILTERS);
  });
});
