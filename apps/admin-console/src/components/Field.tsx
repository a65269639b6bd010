import { cloneElement, type ReactElement } from 'react';

interface ControlProps {
  id?: string;
  name?: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
}

/**
 * One form field: its label, an optional hint and the API's problem with it (in words, from `fieldErrors`). The
 * control (the one child: an input, select or textarea) gets the id, the name, `aria-describedby` naming the hint
 * and the error, and `aria-invalid` while there is an error.
 */
export function Field(props: {
  readonly label: string;
  readonly name: string;
  readonly hint?: string;
  readonly error?: string;
  readonly children: ReactElement<ControlProps>;
}) {
  const { label, name, hint, error, children } = props;
  const id = `field-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const described = [hint !== undefined ? hintId : undefined, error !== undefined ? errorId : undefined]
    .filter((part) => part !== undefined)
    .join(' ');
  const control = cloneElement(children, {
    id,
    name,
    'aria-describedby': described === '' ? undefined : described,
    'aria-invalid': error !== undefined ? true : undefined,
  });
  return (
    <div className={error !== undefined ? 'field invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {hint !== undefined ? (
        <p className="field-hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {control}
      {error !== undefined ? (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}
