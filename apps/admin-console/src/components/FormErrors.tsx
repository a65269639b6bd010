import type { ApiFailure } from '../api/client';
import { asSentence } from './words';

/** `display_name` → `display name`; `scopes.0.scope` → `scopes 1 scope` (positions counted from one). */
function wordsOf(field: string): string {
  return field
    .split('.')
    .map((part) => (/^\d+$/.test(part) ? String(Number(part) + 1) : part.replace(/_/g, ' ')))
    .join(' ');
}

/**
 * The API's problem with a field, as a sentence: class-validator's messages start with the property's name
 * ("display_name must be shorter than…"), which the field's own label already says.
 */
function sentence(field: string, problem: string): string {
  const last = field.split('.').pop() ?? field;
  const rest = problem.startsWith(`${last} `) ? problem.slice(last.length + 1) : problem;
  return asSentence(rest);
}

/**
 * The API's `details` in words per field: the exact field (`scopes.0.scope`) and its top-level field (`scopes`),
 * so a form showing one control for a list still shows its items' problems. Several problems of a field join.
 */
export function fieldErrors(failure: ApiFailure | null | undefined): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const { field, problem } of failure?.details ?? []) {
    const text = sentence(field, problem);
    const top = field.split('.')[0] ?? field;
    for (const key of top === field ? [field] : [field, top]) {
      const shown = key === field ? text : `${wordsOf(field)}: ${text}`;
      errors[key] = errors[key] === undefined ? shown : `${errors[key]} ${shown}`;
    }
  }
  return errors;
}

/**
 * A form's failure above or below its fields: the API's message, and the problems of fields the form does not
 * show itself (`fields` lists those it shows at their control, with `Field`). Nothing when there is no failure.
 */
export function FormErrors(props: {
  readonly failure: ApiFailure | null;
  readonly fields: readonly string[];
  /** What did not happen, first in the message (default "Nothing was saved"). */
  readonly outcome?: string;
}) {
  const { failure, fields, outcome = 'Nothing was saved' } = props;
  if (failure === null) return null;
  const shown = new Set(fields);
  const others = failure.details.filter(({ field }) => !shown.has(field) && !shown.has(field.split('.')[0] ?? field));
  const atFields = failure.details.length - others.length;
  return (
    <div className="notice danger form-errors" role="alert">
      <p>
        <strong>{headline(failure, atFields, outcome)}</strong>
      </p>
      {others.length > 0 ? (
        <ul>
          {others.map(({ field, problem }) => (
            <li key={`${field}:${problem}`}>
              {wordsOf(field)}: {sentence(field, problem)}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function headline(failure: ApiFailure, atFields: number, outcome: string): string {
  if (failure.status === 403) return failure.message;
  if (atFields > 0)
    return `${outcome}: ${atFields === 1 ? 'one field needs' : `${atFields} fields need`} a change (shown at the field).`;
  if (failure.details.length > 0) return `${outcome}.`;
  return `${outcome}. ${asSentence(failure.message)}`;
}
