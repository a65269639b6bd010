import { Link } from 'react-router';
import { ErrorView, Loading } from '../errors/ErrorView';
import { usePermissionSets } from './queries';
import type { RequirementType } from './types';

type Chosen = readonly { readonly permission_set_id: string; readonly requirement_type: RequirementType }[];

/** The requirement types, short (a phone shows the whole choice) with what each means for the person. */
export const REQUIREMENTS: readonly { value: RequirementType; label: string; words: string }[] = [
  { value: 'mandatory', label: 'Required', words: 'The person must allow it to allow the agent.' },
  { value: 'optional', label: 'Optional', words: 'The person may leave it out.' },
  {
    value: 'require_all_scopes',
    label: 'Required, all scopes',
    words: 'The person must allow it with every one of its scopes.',
  },
];

/**
 * Which permission sets the agent asks people for, each with how it is required: a checkbox per set, the
 * requirement beside a chosen one. The chosen sets keep the order they were chosen in (the consent page's order).
 */
export function PermissionSetChoice(props: {
  readonly value: Chosen;
  readonly error?: string;
  readonly readOnly: boolean;
  readonly onChange: (value: Chosen) => void;
}) {
  const { value, error, readOnly, onChange } = props;
  const sets = usePermissionSets();
  const chosen = new Map(value.map((entry) => [entry.permission_set_id, entry.requirement_type]));
  const errorId = 'field-permission_sets-error';
  return (
    <fieldset
      className={error !== undefined ? 'permission-set-choice invalid' : 'permission-set-choice'}
      aria-describedby={['field-permission_sets-hint', error !== undefined ? errorId : ''].join(' ').trim()}
    >
      <legend>Permission sets</legend>
      <p className="field-hint" id="field-permission_sets-hint">
        What the agent asks people to allow: each set names services and MCP servers with their scopes.
      </p>
      {sets.isPending ? <Loading label="Loading permission sets…" /> : null}
      {sets.isError ? <ErrorView error={sets.error} /> : null}
      {sets.data?.length === 0 ? (
        <p className="muted">
          No permission sets yet. <Link to="/permission-sets/new">Create a permission set</Link> first, then choose it
          here.
        </p>
      ) : null}
      {/* A chosen set the list does not hold (deleted meanwhile) is still shown, so saving does not drop it silently. */}
      {value
        .filter((entry) => sets.data !== undefined && !sets.data.some((set) => set.id === entry.permission_set_id))
        .map((entry) => (
          <p key={entry.permission_set_id} className="muted">
            A permission set that no longer exists (<span className="mono">{entry.permission_set_id}</span>) is chosen.{' '}
            {readOnly ? null : (
              <button
                type="button"
                className="button small"
                onClick={() => onChange(value.filter((other) => other.permission_set_id !== entry.permission_set_id))}
              >
                Remove it
              </button>
            )}
          </p>
        ))}
      <ul className="permission-set-options">
        {(sets.data ?? []).map((set) => {
          const requirement = chosen.get(set.id);
          const checkboxId = `permission-set-${set.id}`;
          return (
            <li key={set.id}>
              <label className="choice" htmlFor={checkboxId}>
                <input
                  id={checkboxId}
                  type="checkbox"
                  checked={requirement !== undefined}
                  disabled={readOnly}
                  aria-describedby={set.description !== null ? `${checkboxId}-words` : undefined}
                  onChange={(event) =>
                    onChange(
                      event.target.checked
                        ? [...value, { permission_set_id: set.id, requirement_type: 'mandatory' }]
                        : value.filter((entry) => entry.permission_set_id !== set.id),
                    )
                  }
                />
                <span>
                  {set.name}
                  {set.description !== null ? (
                    <span className="choice-words" id={`${checkboxId}-words`}>
                      {set.description}
                    </span>
                  ) : null}
                </span>
              </label>
              {requirement !== undefined ? (
                <div className="requirement">
                  <select
                    aria-label={`How ${set.name} is required`}
                    aria-describedby={`${checkboxId}-requirement`}
                    value={requirement}
                    disabled={readOnly}
                    onChange={(event) =>
                      onChange(
                        value.map((entry) =>
                          entry.permission_set_id === set.id
                            ? { ...entry, requirement_type: event.target.value as RequirementType }
                            : entry,
                        ),
                      )
                    }
                  >
                    {REQUIREMENTS.map((option) => (
                      <option key={option.value} value={option.value}>
                        {option.label}
                      </option>
                    ))}
                  </select>
                  <span className="choice-words" id={`${checkboxId}-requirement`}>
                    {REQUIREMENTS.find((option) => option.value === requirement)?.words}
                  </span>
                </div>
              ) : null}
            </li>
          );
        })}
      </ul>
      {error !== undefined ? (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
