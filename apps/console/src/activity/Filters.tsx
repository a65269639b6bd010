import { useId } from 'react';
import type { FilterState } from './filter-state';
import { KIND_GROUPS, KIND_LABELS, type EventKind } from './kinds';
import { RANGE_LABELS, type RangeChoice } from './time';

interface Option {
  readonly id: string;
  readonly name: string;
}

/** The filter bar: agent, service, kind and time range, each a labelled control. */
export function Filters({
  value,
  onChange,
  agents,
  services,
  invalidDates,
}: {
  value: FilterState;
  onChange: (next: FilterState) => void;
  agents: readonly Option[];
  services: readonly Option[];
  invalidDates: boolean;
}) {
  const id = useId();
  const set = (patch: Partial<FilterState>) => onChange({ ...value, ...patch });
  return (
    <form className="panel activity-filters" aria-label="Filter activity" onSubmit={(event) => event.preventDefault()}>
      <div className="field">
        <label htmlFor={`${id}-agent`}>Agent</label>
        <select id={`${id}-agent`} value={value.agent} onChange={(event) => set({ agent: event.target.value })}>
          <option value="">All agents</option>
          {agents.map((agent) => (
            <option key={agent.id} value={agent.id}>
              {agent.name}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-service`}>Service</label>
        <select id={`${id}-service`} value={value.service} onChange={(event) => set({ service: event.target.value })}>
          <option value="">All services</option>
          {services.map((service) => (
            <option key={service.id} value={service.id}>
              {service.name}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-kind`}>What happened</label>
        <select
          id={`${id}-kind`}
          value={value.kind}
          onChange={(event) => set({ kind: event.target.value as EventKind | '' })}
        >
          <option value="">Everything</option>
          {KIND_GROUPS.map((group) => (
            <optgroup key={group.label} label={group.label}>
              {group.kinds.map((kind) => (
                <option key={kind} value={kind}>
                  {KIND_LABELS[kind]}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-range`}>When</label>
        <select
          id={`${id}-range`}
          value={value.range}
          onChange={(event) => set({ range: event.target.value as RangeChoice })}
        >
          {(Object.keys(RANGE_LABELS) as RangeChoice[]).map((choice) => (
            <option key={choice} value={choice}>
              {RANGE_LABELS[choice]}
            </option>
          ))}
        </select>
      </div>
      {value.range === 'custom' ? (
        // One cell, so "To" stays beside "From" at every width.
        <div className="activity-dates">
          <div className="field">
            <label htmlFor={`${id}-from`}>From</label>
            <input
              id={`${id}-from`}
              type="date"
              value={value.fromDay}
              max={value.toDay || undefined}
              onChange={(event) => set({ fromDay: event.target.value })}
              aria-describedby={invalidDates ? `${id}-dates` : undefined}
            />
          </div>
          <div className="field">
            <label htmlFor={`${id}-to`}>To</label>
            <input
              id={`${id}-to`}
              type="date"
              value={value.toDay}
              min={value.fromDay || undefined}
              onChange={(event) => set({ toDay: event.target.value })}
              aria-describedby={invalidDates ? `${id}-dates` : undefined}
            />
          </div>
        </div>
      ) : null}
      {invalidDates ? (
        <p className="consent-field-error activity-filters-error" id={`${id}-dates`} role="alert">
          The last day comes before the first: pick a “To” date on or after “From”.
        </p>
      ) : null}
    </form>
  );
}
