import { KIND_LABELS, type EventKind } from './kinds';
import { RANGE_LABELS, type RangeChoice } from './time';

/** What the person filters the activity by; empty strings: no filter. */
export interface FilterState {
  readonly agent: string;
  readonly service: string;
  readonly kind: EventKind | '';
  readonly range: RangeChoice;
  /** `YYYY-MM-DD` of the custom range's first and last day. */
  readonly fromDay: string;
  readonly toDay: string;
}

export const NO_FILTERS: FilterState = { agent: '', service: '', kind: '', range: 'all', fromDay: '', toDay: '' };

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The filters a page address names (`?agent=…&kind=…&range=custom&from=…&to=…`); anything unknown is no filter. */
export function filtersFromSearch(search: URLSearchParams): FilterState {
  const kind = search.get('kind') ?? '';
  const range = search.get('range') ?? 'all';
  const day = (key: string) => {
    const value = search.get(key) ?? '';
    return DAY.test(value) ? value : '';
  };
  const custom = range === 'custom';
  return {
    agent: search.get('agent') ?? '',
    service: search.get('service') ?? '',
    kind: Object.prototype.hasOwnProperty.call(KIND_LABELS, kind) ? (kind as EventKind) : '',
    range: Object.prototype.hasOwnProperty.call(RANGE_LABELS, range) ? (range as RangeChoice) : 'all',
    fromDay: custom ? day('from') : '',
    toDay: custom ? day('to') : '',
  };
}

/** The page address's query for `filters`: only what is set, so a page without filters has none. */
export function filtersToSearch(filters: FilterState): URLSearchParams {
  const search = new URLSearchParams();
  if (filters.agent !== '') search.set('agent', filters.agent);
  if (filters.service !== '') search.set('service', filters.service);
  if (filters.kind !== '') search.set('kind', filters.kind);
  if (filters.range !== 'all') search.set('range', filters.range);
  if (filters.range === 'custom' && filters.fromDay !== '') search.set('from', filters.fromDay);
  if (filters.range === 'custom' && filters.toDay !== '') search.set('to', filters.toDay);
  return search;
}
