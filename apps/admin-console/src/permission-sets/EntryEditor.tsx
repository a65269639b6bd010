import { useId } from 'react';
import { emptyEntry, REQUIREMENTS, type EntryRow, type RequirementType } from './permission-set-form';

/** "The person may leave it out." */
function meaning(value: RequirementType): string {
  const text = REQUIREMENTS.find((r) => r.value === value)?.meaning ?? value;
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** A service or an MCP server a set can name, with the scopes it lists. */
export interface EntryOption {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly { scope: string; description: string }[];
}

/**
 * The services (or MCP servers) of a permission set: each chosen from the registered ones, its scopes ticked from
 * the ones it lists, and how strongly it is required. Each row is a group named "Service 1" / "MCP server 1";
 * `errors` are keyed by the API's field path (`service_scopes.0.scopes`).
 */
export function EntryEditor(props: {
  readonly kind: 'service' | 'resource';
  readonly rows: readonly EntryRow[];
  readonly options: readonly EntryOption[];
  readonly onChange: (rows: EntryRow[]) => void;
  readonly errors: Readonly<Record<string, string>>;
  readonly disabled: boolean;
}) {
  const { kind, rows, options, onChange, errors, disabled } = props;
  const id = useId();
  const noun = kind === 'service' ? 'Service' : 'MCP server';
  const field = kind === 'service' ? 'service_scopes' : 'resource_scopes';
  const listError = errors[field];
  const update = (index: number, change: Partial<EntryRow>) =>
    onChange(rows.map((row, at) => (at === index ? { ...row, ...change } : row)));
  return (
    <fieldset className="row-editor" aria-describedby={`${id}-hint${listError ? ` ${id}-error` : ''}`}>
      <legend>{kind === 'service' ? 'Services' : 'MCP servers'}</legend>
      <p className="field-hint" id={`${id}-hint`}>
        {kind === 'service'
          ? 'Third-party services the agent acts on with the person’s connection, and the scopes it may use there.'
          : 'MCP servers the broker issues the agent tokens for, and the scopes they may carry.'}
      </p>
      {listError ? (
        <p className="field-error" id={`${id}-error`}>
          {listError}
        </p>
      ) : null}
      {options.length === 0 ? (
        <p className="muted">
          {kind === 'service' ? 'No services are registered yet.' : 'No MCP servers are registered yet.'}
        </p>
      ) : null}
      <div className="rows">
        {rows.map((row, index) => {
          const base = `${id}-${row.key}`;
          const chosen = options.find((option) => option.id === row.id);
          const idError = errors[`${field}.${index}.${kind === 'service' ? 'service_id' : 'resource_id'}`];
          const scopesError = errors[`${field}.${index}.scopes`];
          const requirementError = errors[`${field}.${index}.requirement_type`];
          const taken = new Set(rows.filter((_, at) => at !== index).map((r) => r.id));
          const listed = new Set(chosen?.scopes.map((s) => s.scope) ?? []);
          // Scopes of the set its service no longer lists stay visible (and ticked) for MCP servers: the API names them.
          const stale = kind === 'resource' ? row.scopes.filter((scope) => !listed.has(scope)) : [];
          return (
            <div key={row.key} className="row entry" role="group" aria-label={`${noun} ${index + 1}`}>
              <div className="row-field row-field-full">
                <label htmlFor={`${base}-id`}>{noun}</label>
                <select
                  id={`${base}-id`}
                  value={row.id}
                  disabled={disabled}
                  aria-invalid={idError ? true : undefined}
                  aria-describedby={idError ? `${base}-id-error` : undefined}
                  onChange={(event) => update(index, { id: event.target.value, scopes: [], other: '' })}
                >
                  <option value="">{kind === 'service' ? 'Choose a service…' : 'Choose an MCP server…'}</option>
                  {options.map((option) => (
                    <option key={option.id} value={option.id} disabled={taken.has(option.id)}>
                      {option.name}
                    </option>
                  ))}
                  {row.id !== '' && chosen === undefined ? <option value={row.id}>Deleted ({row.id})</option> : null}
                </select>
                {idError ? (
                  <p className="field-error" id={`${base}-id-error`}>
                    {idError}
                  </p>
                ) : null}
              </div>
              {chosen !== undefined || stale.length > 0 ? (
                <fieldset className="scope-choices" aria-describedby={scopesError ? `${base}-scopes-error` : undefined}>
                  <legend>Scopes of {chosen?.name ?? 'this ' + noun.toLowerCase()}</legend>
                  {chosen !== undefined && chosen.scopes.length === 0 ? (
                    <p className="muted">{chosen.name} lists no scopes.</p>
                  ) : null}
                  {[
                    ...(chosen?.scopes ?? []),
                    ...stale.map((scope) => ({ scope, description: 'no longer offered' })),
                  ].map((s) => (
                    <label key={s.scope} className="choice">
                      <input
                        type="checkbox"
                        checked={row.scopes.includes(s.scope)}
                        disabled={disabled}
                        onChange={(event) =>
                          update(index, {
                            scopes: event.target.checked
                              ? [...row.scopes, s.scope]
                              : row.scopes.filter((scope) => scope !== s.scope),
                          })
                        }
                      />
                      <span>
                        <code className="mono">{s.scope}</code>
                        {s.description ? <span className="choice-hint"> {s.description}</span> : null}
                      </span>
                    </label>
                  ))}
                  {scopesError ? (
                    <p className="field-error" id={`${base}-scopes-error`}>
                      {scopesError}
                    </p>
                  ) : null}
                </fieldset>
              ) : null}
              {kind === 'service' && chosen !== undefined ? (
                <div className="row-field row-field-full">
                  <label htmlFor={`${base}-other`}>Other scopes (optional)</label>
                  <input
                    type="text"
                    id={`${base}-other`}
                    className="mono"
                    value={row.other}
                    disabled={disabled}
                    spellCheck={false}
                    aria-describedby={`${base}-other-hint`}
                    onChange={(event) => update(index, { other: event.target.value })}
                  />
                  <p className="field-hint" id={`${base}-other-hint`}>
                    Scopes {chosen.name} does not list, separated by spaces. People see them without a description.
                  </p>
                </div>
              ) : null}
              <div className="row-field">
                <label htmlFor={`${base}-requirement`}>Requirement</label>
                <select
                  id={`${base}-requirement`}
                  value={row.requirement_type}
                  disabled={disabled}
                  aria-invalid={requirementError ? true : undefined}
                  aria-describedby={`${base}-requirement-hint`}
                  onChange={(event) => update(index, { requirement_type: event.target.value as RequirementType })}
                >
                  {REQUIREMENTS.map((r) => (
                    <option key={r.value} value={r.value}>
                      {r.label}
                    </option>
                  ))}
                </select>
                <p className="field-hint" id={`${base}-requirement-hint`}>
                  {meaning(row.requirement_type)}
                </p>
                {requirementError ? <p className="field-error">{requirementError}</p> : null}
              </div>
              <button
                type="button"
                className="button row-remove"
                disabled={disabled}
                aria-label={`Remove ${noun.toLowerCase()} ${index + 1}${chosen ? ` (${chosen.name})` : ''}`}
                onClick={() => onChange(rows.filter((_, at) => at !== index))}
              >
                Remove
              </button>
            </div>
          );
        })}
      </div>
      <button
        type="button"
        className="button"
        disabled={disabled || options.length === 0}
        onClick={() => onChange([...rows, emptyEntry()])}
      >
        {kind === 'service' ? 'Add a service' : 'Add an MCP server'}
      </button>
    </fieldset>
  );
}
