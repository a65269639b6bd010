import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { EventRow } from '../activity/EventRow';
import { Filters, NO_FILTERS, type FilterState } from '../activity/Filters';
import { useDirectory, useNames } from '../activity/names';
import { dateRange, presetRange, type TimeRange } from '../activity/time';
import { ErrorView, Loading } from '../components/ErrorView';
import { usePageTitle } from '../components/page-title';

/** Events per page of the list (the API allows 1-100). */
const PAGE_SIZE = 25;

/** The query's filters; a preset range is computed when picked (not on every render), so "Load more" continues the same list. */
interface Query {
  readonly agent_id?: string;
  readonly service_id?: string;
  readonly type?: string[];
  readonly from?: string;
  readonly to?: string;
}

function toQuery(filters: FilterState, range: TimeRange): Query {
  return {
    ...(filters.agent === '' ? {} : { agent_id: filters.agent }),
    ...(filters.service === '' ? {} : { service_id: filters.service }),
    ...(filters.kind === '' ? {} : { type: [filters.kind] }),
    ...range,
  };
}

/** `/activity` (issue 17 item 3): what the person's agents did with their delegation, and what they did, newest first. */
export function ActivityPage() {
  usePageTitle('Activity');
  const [filters, setFilters] = useState<FilterState>(NO_FILTERS);
  const [preset, setPreset] = useState<TimeRange>({});
  const custom = filters.range === 'custom' ? dateRange(filters.fromDay, filters.toDay) : undefined;
  const invalidDates = filters.range === 'custom' && custom === undefined;
  const query = toQuery(filters, filters.range === 'custom' ? (custom ?? {}) : preset);
  const directory = useDirectory();

  const activity = useInfiniteQuery({
    queryKey: ['activity', query],
    queryFn: ({ pageParam }) => unwrap(api.GET('/api/activity', { params: { query: { ...query, limit: PAGE_SIZE, ...(pageParam === null ? {} : { cursor: pageParam }) } } })),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.next_cursor,
    enabled: !invalidDates,
    placeholderData: keepPreviousData,
  });
  const events = activity.data?.pages.flatMap((page) => page.data) ?? [];
  const names = useNames(directory, events.flatMap((event) => (event.agent_id === null ? [] : [event.agent_id])));
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);

  const change = (next: FilterState) => {
    if (next.range !== filters.range) setPreset(presetRange(next.range, new Date()));
    setFilters(next);
  };

  return (
    <>
      <div className="page-header">
        <div>
          <h1>Activity</h1>
          <p>What your agents did with the access you gave them, and the changes you made, newest first.</p>
        </div>
      </div>
      <Filters value={filters} onChange={change} agents={directory.agents} services={directory.services} invalidDates={invalidDates} />
      {invalidDates ? null : activity.isPending ? (
        <Loading label="Loading your activity…" />
      ) : activity.isError && events.length === 0 ? (
        <ErrorView error={activity.error} />
      ) : events.length === 0 ? (
        <Empty filtered={filtered} onClear={() => change(NO_FILTERS)} />
      ) : (
        <>
          <p className="sr-only" role="status">
            {`${events.length} event${events.length === 1 ? '' : 's'} shown${activity.hasNextPage ? ', more available' : ''}.`}
          </p>
          <ol className="list activity-list" aria-label="Activity" aria-busy={activity.isFetching}>
            {events.map((event) => (
              <EventRow key={event.id} event={event} names={names} now={new Date()} />
            ))}
          </ol>
          {activity.isFetchNextPageError ? <ErrorView error={activity.error} /> : null}
          <div className="activity-more">
            {activity.hasNextPage ? (
              <button type="button" className="button" disabled={activity.isFetchingNextPage} onClick={() => void activity.fetchNextPage()}>
                {activity.isFetchingNextPage ? 'Loading…' : 'Load more'}
              </button>
            ) : (
              <p className="muted">{events.length === 1 ? 'That is the only event.' : `That is all: ${events.length} events.`}</p>
            )}
          </div>
        </>
      )}
    </>
  );
}

function Empty({ filtered, onClear }: { filtered: boolean; onClear: () => void }) {
  if (filtered)
    return (
      <div className="panel empty">
        <p>No activity matches these filters.</p>
        <button type="button" className="button" onClick={onClear}>
          Clear filters
        </button>
      </div>
    );
  return (
    <div className="panel empty">
      <p>Nothing has happened yet.</p>
      <p>When an agent uses a service for you, or you grant access, connect a service or decide on an approval, it is listed here.</p>
    </div>
  );
}
