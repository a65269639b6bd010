import { useId, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { useActivity, type ActivityQuery } from '../api/queries';
import { EventRow } from './EventRow';
import { NO_FILTERS, filtersFromSearch, filtersToSearch, type FilterState } from './filter-state';
import { Filters } from './Filters';
import type { ActivityEvent } from './kinds';
import { useDirectory, useNames, type Names } from './names';
import { dateRange, dayHeading, localDay, presetRange, type TimeRange } from './time';
import { ErrorView, Loading } from '../errors/ErrorView';
import { usePageTitle } from '../components/page-title';
import { ReconnectBanner } from '../components/ReconnectBanner';

/** The query of the filters; a preset range is computed when picked (not on every render), so "Load more" continues the same list. */
function toQuery(filters: FilterState, range: TimeRange): ActivityQuery {
  return {
    ...(filters.agent === '' ? {} : { agent_id: filters.agent }),
    ...(filters.service === '' ? {} : { service_id: filters.service }),
    ...(filters.kind === '' ? {} : { type: [filters.kind] }),
    ...range,
  };
}

/** `/activity`: what the person's agents did with their delegation, and what they did, newest first. */
export function ActivityPage() {
  usePageTitle('Activity');
  // The filters live in the page address: a reload or a shared link keeps them, Back undoes the last change.
  // The page shows a change at once (the address follows a moment later, in a transition); an address
  // that changes by itself (Back, Forward, a link) wins.
  const [search, setSearch] = useSearchParams();
  const address = search.toString();
  const [shown, setShown] = useState(() => ({ address, filters: filtersFromSearch(search) }));
  const [seenAddress, setSeenAddress] = useState(address);
  if (address !== seenAddress) {
    setSeenAddress(address);
    if (address !== shown.address) setShown({ address, filters: filtersFromSearch(search) });
  }
  const filters = shown.filters;
  // A preset range ends when it is picked (or the page loaded), so "Load more" continues the same list.
  const preset = useMemo<TimeRange>(() => presetRange(filters.range, new Date()), [filters.range]);
  const custom = filters.range === 'custom' ? dateRange(filters.fromDay, filters.toDay) : undefined;
  const invalidDates = filters.range === 'custom' && custom === undefined;
  const query = toQuery(filters, filters.range === 'custom' ? (custom ?? {}) : preset);
  const directory = useDirectory();

  const activity = useActivity(query, !invalidDates);
  const events = activity.data?.pages.flatMap((page) => page.data) ?? [];
  const names = useNames(directory, events);
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);

  const change = (next: FilterState) => {
    const nextAddress = filtersToSearch(next);
    setShown({ address: nextAddress.toString(), filters: next });
    setSearch(nextAddress);
  };

  return (
    <>
      <div className="page-header">
        <div>
          <h1>Activity</h1>
          <p>What your agents did with the access you gave them, and the changes you made, newest first.</p>
        </div>
      </div>
      <Filters
        value={filters}
        onChange={change}
        agents={directory.agents}
        services={directory.services}
        invalidDates={invalidDates}
      />
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
          <ReconnectBanner query={activity} />
          <div className="activity-days" aria-busy={activity.isFetching}>
            {byDay(events).map(([day, items]) => (
              <Day key={day} day={day} events={items} names={names} />
            ))}
          </div>
          {activity.isFetchNextPageError ? <ErrorView error={activity.error} /> : null}
          <div className="activity-more">
            {activity.hasNextPage ? (
              <button
                type="button"
                className="button"
                disabled={activity.isFetchingNextPage}
                onClick={() => void activity.fetchNextPage()}
              >
                {activity.isFetchingNextPage ? 'Loading…' : 'Load more'}
              </button>
            ) : (
              <p className="muted">
                {events.length === 1 ? 'That is the only event.' : `That is all: ${events.length} events.`}
              </p>
            )}
          </div>
        </>
      )}
    </>
  );
}

/** Events (newest first) in runs of one local day each. */
function byDay(events: readonly ActivityEvent[]): [string, ActivityEvent[]][] {
  const days: [string, ActivityEvent[]][] = [];
  for (const event of events) {
    const day = localDay(event.occurred_at);
    const last = days[days.length - 1];
    if (last !== undefined && last[0] === day) last[1].push(event);
    else days.push([day, [event]]);
  }
  return days;
}

/** One day of activity: its heading ("Today", "Yesterday", the date) and its events. */
function Day({ day, events, names }: { day: string; events: readonly ActivityEvent[]; names: Names }) {
  const id = useId();
  const now = new Date();
  return (
    <section className="activity-day" aria-labelledby={id}>
      <h2 id={id} className="activity-day-heading">
        <time dateTime={day}>{dayHeading(day, now)}</time>
      </h2>
      <ol className="list activity-list" aria-labelledby={id}>
        {events.map((event) => (
          <EventRow key={event.id} event={event} names={names} now={now} />
        ))}
      </ol>
    </section>
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
      <p>
        When an agent uses a service for you, or you grant access, connect a service or decide on an approval, it is
        listed here.
      </p>
    </div>
  );
}
