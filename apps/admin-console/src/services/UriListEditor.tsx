import { useId } from 'react';
import { rowKey, type UriRow } from './service-form';

/** A list of URIs (a service's protected resources): add, change, remove; `errors` keyed `<field>.<index>`. */
export function UriListEditor(props: {
  readonly legend: string;
  readonly hint: string;
  /** The API's field name (`protected_resources`). */
  readonly field: string;
  /** The label of one entry ("Resource URI"). */
  readonly itemLabel: string;
  readonly addLabel: string;
  readonly placeholder: string;
  readonly rows: readonly UriRow[];
  readonly onChange: (rows: UriRow[]) => void;
  readonly errors: Readonly<Record<string, string>>;
  readonly disabled: boolean;
}) {
  const { rows, onChange, errors, disabled, field } = props;
  const id = useId();
  const listError = errors[field];
  return (
    <fieldset className="row-editor" aria-describedby={`${id}-hint${listError ? ` ${id}-error` : ''}`}>
      <legend>{props.legend}</legend>
      <p className="field-hint" id={`${id}-hint`}>
        {props.hint}
      </p>
      {listError ? (
        <p className="field-error" id={`${id}-error`}>
          {listError}
        </p>
      ) : null}
      <ol className="rows">
        {rows.map((row, index) => {
          const error = errors[`${field}.${index}`];
          const inputId = `${id}-${row.key}`;
          return (
            <li key={row.key} className="row">
              <div className="row-field row-field-wide">
                <label htmlFor={inputId}>
                  {props.itemLabel} {index + 1}
                </label>
                <input
                  id={inputId}
                  type="url"
                  className="mono"
                  value={row.value}
                  placeholder={props.placeholder}
                  disabled={disabled}
                  spellCheck={false}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={error ? `${inputId}-error` : undefined}
                  onChange={(event) =>
                    onChange(rows.map((r, at) => (at === index ? { ...r, value: event.target.value } : r)))
                  }
                />
                {error ? (
                  <p className="field-error" id={`${inputId}-error`}>
                    {error}
                  </p>
                ) : null}
              </div>
              <button
                type="button"
                className="button row-remove"
                disabled={disabled}
                aria-label={`Remove ${props.itemLabel.toLowerCase()} ${index + 1}`}
                onClick={() => onChange(rows.filter((_, at) => at !== index))}
              >
                Remove
              </button>
            </li>
          );
        })}
      </ol>
      <button
        type="button"
        className="button"
        disabled={disabled}
        onClick={() => onChange([...rows, { key: rowKey(), value: '' }])}
      >
        {props.addLabel}
      </button>
    </fieldset>
  );
}
