import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ApiFailure } from '../api/client';
import { EmptyState } from '../components/EmptyState';
import { Field } from '../components/Field';
import { ago, dateTime } from '../components/format';
import { fieldErrors, FormErrors } from '../components/FormErrors';
import { PageTitle } from '../components/PageTitle';
import { ErrorView, Loading } from '../errors/ErrorView';
import { filterParams, filtersFrom, useDirectory, useEvents, type ActivityFilters } from './activity';
import { actorWords, kindLabel, KIND_GROUPS, type AdminEvent } from './kinds';

/** An RFC 3339 instant as a `datetime-local` value in the browser's time zone ('' stays ''). */
function toLocalInput(iso: string): string {
  if (iso === '') return '';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return '';
  const local = new Date(at.getTime() - at.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** A `datetime-local` value (the browser's time zone) as RFC 3339 ('' stays ''). */
function fromLocalInput(value: string): string {
  if (value === '') return '';
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? '' : at.toISOString();
}

const FILTER_FIELDS = ['principal', 'agent_id', 'service_id', 'type', 'from', 'to'];

/** Before every event the broker can hold: an export without a start takes everything. */
const BEGINNING = '1970-01-01T00:00:00.000Z';
const DAY_MS = 86_400_000;

/**
 * The export's query: the filters, and a range (the export needs both ends): the page's own, else from the beginning
 * until a day from now (no event is later than now; the margin covers a clock a little ahead of the browser's).
 */
function exportParams(filters: ActivityFilters): URLSearchParams {
  return filterParams({
    ...filters,
    from: filters.from === '' ? BEGINNING : filters.from,
    to: filters.to === '' ? new Date(Date.now() + DAY_MS).toISOString() : filters.to,
  });
}

function Filters(props: {
  readonly filters: ActivityFilters;
  readonly failure: ApiFailure | null;
  readonly onApply: (filters: ActivityFilters) => void;
}) {
  const { filters, failure, onApply } = props;
  const { agents, services } = useDirectory();
  const [draft, setDraft] = useState(filters);
  const [shown, setShown] = useState(filters);
  // The address changed (a link, Back): the form shows the filters in force.
  if (shown !== filters) {
    setShown(filters);
    setDraft(filters);
  }
  const errors = fieldErrors(failure);
  // The API names the range's ends by their parameters; the form calls them From and Until.
  const until = errors.to?.replace(/\bfrom\b/, 'From');
  const set = (name: keyof ActivityFilters) => (value: string) => setDraft({ ...draft, [name]: value });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onApply(draft);
  };
  const none: ActivityFilters = { principal: '', agent_id: '', service_id: '', type: '', from: '', to: '' };
  return (
    <form className="panel filters" onSubmit={submit} aria-labelledby="filters-heading">
      <h2 id="filters-heading">Filter</h2>
      <div className="filter-grid">
        <Field label="Person" name="principal" error={errors.principal}>
          <input
            type="search"
            value={draft.principal}
            placeholder="alice@example.com"
            onChange={(event) => set('principal')(event.target.value)}
          />
        </Field>
        <Field label="Agent" name="agent_id" error={errors.agent_id}>
          <select value={draft.agent_id} onChange={(event) => set('agent_id')(event.target.value)}>
            <option value="">Any agent</option>
            {agents.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.display_name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Service" name="service_id" error={errors.service_id}>
          <select value={draft.service_id} onChange={(event) => set('service_id')(event.target.value)}>
            <option value="">Any service</option>
            {services.map((service) => (
              <option key={service.id} value={service.id}>
                {service.display_name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Kind" name="type" error={errors.type}>
          <select value={draft.type} onChange={(event) => set('type')(event.target.value)}>
            <option value="">Any kind</option>
            {KIND_GROUPS.map((group) => (
              <optgroup key={group.label} label={group.label}>
                {group.kinds.map((kind) => (
                  <option key={kind} value={kind}>
                    {kindLabel(kind)}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </Field>
        <Field label="From" name="from" error={errors.from}>
          <input
            type="datetime-local"
            value={toLocalInput(draft.from)}
            onChange={(event) => set('from')(fromLocalInput(event.target.value))}
          />
        </Field>
        <Field label="Until" name="to" error={until}>
          <input
            type="datetime-local"
            value={toLocalInput(draft.to)}
            onChange={(event) => set('to')(fromLocalInput(event.target.value))}
          />
        </Field>
      </div>
      <p className="field-hint">A person is named by their exact principal; times are in your time zone.</p>
      <FormErrors failure={failure} fields={FILTER_FIELDS} outcome="The filters were not applied" />
      <div className="actions start">
        <button type="submit" className="button primary">
          Apply filters
        </button>
        <button
          type="button"
          className="button"
          onClick={() => {
            setDraft(none);
            onApply(none);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}

function EventRow(props: {
  readonly event: AdminEvent;
  readonly agentName: (id: string) => string | undefined;
  readonly serviceName: (id: string) => string | undefined;
}) {
  const { event, agentName, serviceName } = props;
  const details = Object.entries(event.details).filter(([, value]) => value !== null && value !== undefined);
  return (
    <li className="event">
      <div className="event-head">
        <span className="event-what">{kindLabel(event.type)}</span>
        {event.outcome === 'failure' ? <span className="badge danger">Failed</span> : null}
        <time dateTime={event.occurred_at} className="muted" title={dateTime(event.occurred_at)}>
          {dateTime(event.occurred_at)} ({ago(event.occurred_at)})
        </time>
      </div>
      <dl className="event-facts">
        <div>
          <dt>By</dt>
          <dd>{actorWords(event.actor, agentName)}</dd>
        </div>
        {event.principal !== null ? (
          <div>
            <dt>Person</dt>
            <dd>{event.principal}</dd>
          </div>
        ) : null}
        {event.agent_id !== null ? (
          <div>
            <dt>Agent</dt>
            <dd>
              <Link to={`/agents/${event.agent_id}`}>{agentName(event.agent_id) ?? 'a deleted agent'}</Link>
            </dd>
          </div>
        ) : null}
        {event.service_id !== null ? (
          <div>
            <dt>Service</dt>
            <dd>
              <Link to={`/services/${event.service_id}`}>{serviceName(event.service_id) ?? 'a deleted service'}</Link>
            </dd>
          </div>
        ) : null}
      </dl>
      {details.length > 0 ? (
        <details className="event-details">
          <summary>Details</summary>
          <dl className="event-facts">
            {details.map(([key, value]) => (
              <div key={key}>
                <dt>{key.replace(/_/g, ' ')}</dt>
                <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
              </div>
            ))}
            {event.trace_id !== null ? (
              <div>
                <dt>trace id</dt>
                <dd>
                  <code>{event.trace_id}</code>
                </dd>
              </div>
            ) : null}
          </dl>
        </details>
      ) : null}
    </li>
  );
}

/**
 * The ledger across people: every event, filtered by person, agent, service, kind and time, newest first, with the
 * export of the same filter (newline-delimited JSON). The filters are the page's address, so a view can be shared.
 */
export function ActivityPage() {
  const [search, setSearch] = useSearchParams();
  const filters = filtersFrom(search);
  const events = useEvents(filters);
  const { agents, services } = useDirectory();
  const agentName = (id: string) => agents.find((agent) => agent.id === id)?.display_name;
  const serviceName = (id: string) => services.find((service) => service.id === id)?.display_name;
  const failure = events.error instanceof ApiFailure && events.error.status === 400 ? events.error : null;
  const items = events.data?.pages.flatMap((page) => page.items) ?? [];
  const filtered = filterParams(filters).size > 0;
  const exportQuery = exportParams(filters).toString();
  return (
    <>
      <PageTitle
        title="Activity"
        lead="Everything the broker recorded, across people: who did what, through which agent, when."
        actions={
          <a className="button" href={`/api/events/export?${exportQuery}`} download>
            Export {filtered ? 'these events' : 'all events'}
          </a>
        }
      />
      <Filters filters={filters} failure={failure} onApply={(next) => setSearch(filterParams(next))} />
      {events.isPending ? (
        <Loading label="Loading the activity…" />
      ) : events.isError && failure === null ? (
        <ErrorView error={events.error} />
      ) : failure !== null ? null : items.length === 0 ? (
        <EmptyState title={filtered ? 'No events match these filters' : 'No activity yet'}>
          <p>
            {filtered
              ? 'Nothing the broker recorded matches. Widen the time range or clear a filter.'
              : 'Events appear here as administrators change the registry and people use their agents.'}
          </p>
        </EmptyState>
      ) : (
        <section aria-labelledby="events-heading">
          <h2 id="events-heading" className="sr-only">
            Events
          </h2>
          <ul className="event-list">
            {items.map((event) => (
              <EventRow key={event.id} event={event} agentName={agentName} serviceName={serviceName} />
            ))}
          </ul>
          {events.hasNextPage ? (
            <p className="more">
              <button
                type="button"
                className="button"
                disabled={events.isFetchingNextPage}
                onClick={() => void events.fetchNextPage()}
              >
                {events.isFetchingNextPage ? 'Loading…' : 'Show older events'}
              </button>
            </p>
          ) : (
            <p className="muted more">That is everything{filtered ? ' matching these filters' : ''}.</p>
          )}
        </section>
      )}
    </>
  );
}
