import { keepPreviousData, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';

/** The ledger filters, named as the API's query parameters (and the page's address: a filtered view is a link). */
export interface ActivityFilters {
  readonly principal: string;
  readonly agent_id: string;
  readonly service_id: string;
  readonly type: string;
  /** RFC 3339, or '' for no bound. */
  readonly from: string;
  readonly to: string;
}

export const FILTER_NAMES = ['principal', 'agent_id', 'service_id', 'type', 'from', 'to'] as const;

export function filtersFrom(search: URLSearchParams): ActivityFilters {
  const get = (name: string) => search.get(name)?.trim() ?? '';
  return {
    principal: get('principal'),
    agent_id: get('agent_id'),
    service_id: get('service_id'),
    type: get('type'),
    from: get('from'),
    to: get('to'),
  };
}

/** The filters that are set, as query parameters (for the API, the export and the page's address). */
export function filterParams(filters: ActivityFilters): URLSearchParams {
  const params = new URLSearchParams();
  for (const name of FILTER_NAMES) if (filters[name] !== '') params.set(name, filters[name]);
  return params;
}

/** The ledger, newest first, a page of 50 at a time (`next_cursor` for older ones). */
export function useEvents(filters: ActivityFilters) {
  return useInfiniteQuery({
    queryKey: ['events', filters],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => {
      const query: Record<string, string | string[]> = {};
      for (const name of FILTER_NAMES) if (filters[name] !== '') query[name] = filters[name];
      if (filters.type !== '') query.type = [filters.type];
      return unwrap(
        api.GET('/api/events', {
          params: { query: { ...query, limit: 50, ...(pageParam === undefined ? {} : { cursor: pageParam }) } },
        }),
      );
    },
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    placeholderData: keepPreviousData,
  });
}

/** Agents and services by id, for the filters' choices and the events' names. */
export function useDirectory() {
  const agents = useQuery({ queryKey: ['directory', 'agents'], queryFn: () => unwrap(api.GET('/api/agents')) });
  const services = useQuery({ queryKey: ['directory', 'services'], queryFn: () => unwrap(api.GET('/api/services')) });
  return { agents: agents.data ?? [], services: services.data ?? [] };
}
