import { useEffect, useRef } from 'react';

/**
 * A list the administrator edits one entry per input (redirect URIs, client metadata documents, scopes, resources):
 * each entry with its Remove button, and Add for one more. The API judges the list as a whole, so its problem is
 * shown under the list, and every entry points at it.
 */
export function ListField(props: {
  readonly name: string;
  readonly label: string;
  /** One entry's name, for its input and its buttons ("Redirect URI" → "Redirect URI 2", "Remove redirect URI 2"). */
  readonly itemLabel: string;
  readonly hint: string;
  /** What an empty list means ("None: the agent may ask for any scope"). */
  readonly emptyText: string;
  readonly placeholder?: string;
  readonly values: readonly string[];
  readonly error?: string;
  readonly readOnly: boolean;
  readonly onChange: (values: string[]) => void;
}) {
  const { name, label, itemLabel, hint, emptyText, placeholder, values, error, readOnly, onChange } = props;
  const id = `field-${name}`;
  const list = useRef<HTMLUListElement>(null);
  // After Add, the new (last) entry gets the focus, so the administrator types straight into it.
  const added = useRef(false);
  useEffect(() => {
    if (!added.current) return;
    added.current = false;
    const inputs = list.current?.querySelectorAll('input');
    inputs?.[inputs.length - 1]?.focus();
  }, [values.length]);
  const described = [`${id}-hint`, error !== undefined ? `${id}-error` : undefined].filter(Boolean).join(' ');
  const lower = itemLabel.charAt(0).toLowerCase() + itemLabel.slice(1);
  return (
    <fieldset className={error !== undefined ? 'list-field invalid' : 'list-field'} aria-describedby={described}>
      <legend>{label}</legend>
      <p className="field-hint" id={`${id}-hint`}>
        {hint}
      </p>
      {values.length === 0 ? <p className="muted list-empty">{emptyText}</p> : null}
      <ul ref={list} className="list-entries">
        {values.map((value, index) => (
          // The position is the entry's identity here: entries are plain strings that may repeat while typed.
          <li key={index}>
            <input
              type="text"
              name={`${name}[${index}]`}
              aria-label={`${itemLabel} ${index + 1}`}
              aria-describedby={described}
              aria-invalid={error !== undefined ? true : undefined}
              value={value}
              placeholder={placeholder}
              readOnly={readOnly}
              spellCheck={false}
              autoCapitalize="off"
              autoComplete="off"
              onChange={(event) => onChange(values.map((old, at) => (at === index ? event.target.value : old)))}
            />
            {readOnly ? null : (
              <button
                type="button"
                className="button small"
                aria-label={`Remove ${lower} ${index + 1}`}
                onClick={() => onChange(values.filter((_, at) => at !== index))}
              >
                Remove
              </button>
            )}
          </li>
        ))}
      </ul>
      {error !== undefined ? (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
      {readOnly ? null : (
        <button
          type="button"
          className="button small"
          onClick={() => {
            added.current = true;
            onChange([...values, '']);
          }}
        >
          Add {lower}
        </button>
      )}
    </fieldset>
  );
}
