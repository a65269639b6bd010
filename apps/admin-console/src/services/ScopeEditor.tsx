import { useId } from 'react';
import { rowKey, type ScopeRow } from './service-form';

/**
 * The scopes a service or an MCP server offers, each with the description the consent page shows: an editable
 * list (add, change, remove). Each row is a group named "Scope N"; `errors` are keyed by the API's field path
 * (`scopes.0.scope`), shown under the input they are about.
 */
export function ScopeEditor(props: {
  readonly rows: readonly ScopeRow[];
  readonly onChange: (rows: ScopeRow[]) => void;
  readonly errors: Readonly<Record<string, string>>;
  readonly disabled: boolean;
  /** The description is required (MCP servers) or optional (services). */
  readonly descriptionRequired: boolean;
  readonly scopeExample: string;
  readonly descriptionExample: string;
}) {
  const { rows, onChange, errors, disabled, descriptionRequired } = props;
  const id = useId();
  const listError = errors.scopes;
  const update = (index: number, change: Partial<ScopeRow>) =>
    onChange(rows.map((row, at) => (at === index ? { ...row, ...change } : row)));
  return (
    <fieldset className="row-editor" aria-describedby={`${id}-hint${listError ? ` ${id}-error` : ''}`}>
      <legend>Scopes</legend>
      <p className="field-hint" id={`${id}-hint`}>
        Each scope with what it lets an agent do, in words: people read the description on the consent page.
        {descriptionRequired ? ' Every scope needs a description.' : ''}
      </p>
      {listError ? (
        <p className="field-error" id={`${id}-error`}>
          {listError}
        </p>
      ) : null}
      {rows.length === 0 ? <p className="muted">No scopes yet.</p> : null}
      <div className="rows">
        {rows.map((row, index) => {
          const scopeError = errors[`scopes.${index}.scope`];
          const descriptionError = errors[`scopes.${index}.description`];
          const base = `${id}-${row.key}`;
          return (
            <div key={row.key} className="row" role="group" aria-label={`Scope ${index + 1}`}>
              <div className="row-field">
                <label htmlFor={`${base}-scope`}>Scope</label>
                <input
                  type="text"
                  id={`${base}-scope`}
                  className="mono"
                  value={row.scope}
                  placeholder={props.scopeExample}
                  disabled={disabled}
                  spellCheck={false}
                  autoCapitalize="off"
                  aria-invalid={scopeError ? true : undefined}
                  aria-describedby={scopeError ? `${base}-scope-error` : undefined}
                  onChange={(event) => update(index, { scope: event.target.value })}
                />
                {scopeError ? (
                  <p className="field-error" id={`${base}-scope-error`}>
                    {scopeError}
                  </p>
                ) : null}
              </div>
              <div className="row-field row-field-wide">
                <label htmlFor={`${base}-description`}>
                  What it lets an agent do{descriptionRequired ? '' : ' (optional)'}
                </label>
                <input
                  type="text"
                  id={`${base}-description`}
                  value={row.description}
                  placeholder={props.descriptionExample}
                  disabled={disabled}
                  aria-invalid={descriptionError ? true : undefined}
                  aria-describedby={descriptionError ? `${base}-description-error` : undefined}
                  onChange={(event) => update(index, { description: event.target.value })}
                />
                {descriptionError ? (
                  <p className="field-error" id={`${base}-description-error`}>
                    {descriptionError}
                  </p>
                ) : null}
              </div>
              <button
                type="button"
                className="button row-remove"
                disabled={disabled}
                aria-label={`Remove scope ${index + 1}${row.scope ? ` (${row.scope})` : ''}`}
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
        disabled={disabled}
        onClick={() => onChange([...rows, { key: rowKey(), scope: '', description: '' }])}
      >
        Add a scope
      </button>
    </fieldset>
  );
}
