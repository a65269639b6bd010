import { useId } from 'react';
import type { FilterState } from './filter-state';
import { KIND_GROUPS, KIND_LABELS, type EventKind } from './kinds';
import { RANGE_LABELS, type RangeChoice } from './time';

interface Option {
  readonly id: string;
  readonly name: string;
}

/** An agent of the person's history: one they no longer allow stays, since its history does. */
interface AgentOption extends Option {
  readonly allowed: boolean;
}

function agentOptions(agents: readonly AgentOption[]) {
  return agents.map((agent) => (
    <option key={agent.id} value={agent.id}>
      {agent.name}
    </option>
  ));
}

/** The filter bar: agent (every one of the person's history), service, kind and time range, each a labelled control. */
export function Filters({
  value,
  onChange,
  agents,
  services,
  invalidDates,
}: {
  value: FilterState;
  onChange: (next: FilterState) => void;
  agents: readonly AgentOption[];
  services: readonly Option[];
  invalidDates: boolean;
}) {
  const id = useId();
  const set = (patch: Partial<FilterState>) => onChange({ ...value, ...patch });
  // An agent the person no longer allows stays (its history does), in a group of its own and said under the list.
  const allowed = agents.filter((agent) => agent.allowed);
  const ended = agents.filter((agent) => !agent.allowed);
  const selectedEnded = ended.find((agent) => agent.id === value.agent);
  return (
    <form className="panel activity-filters" aria-label="Filter activity" onSubmit={(event) => event.preventDefault()}>
      <div className="field">
        <label htmlFor={`${id}-agent`}>Agent</label>
        <select
          id={`${id}-agent`}
          value={value.agent}
          aria-describedby={selectedEnded === undefined ? undefined : `${id}-agent-note`}
          onChange={(event) => set({ agent: event.target.value })}
        >
          <option value="">All agents</option>
          {allowed.length > 0 && ended.length > 0 ? (
            <>
              <optgroup label="Allowed now">{agentOptions(allowed)}</optgroup>
              <optgroup label="No longer allowed">{agentOptions(ended)}</optgroup>
            </>
          ) : (
            agentOptions(agents)
          )}
        </select>
        {selectedEnded !== undefined ? (
          <p className="field-note" id={`${id}-agent-note`}>
            No longer allowed: {selectedEnded.name} cannot use your access now. Its history stays.
          </p>
        ) : null}
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
