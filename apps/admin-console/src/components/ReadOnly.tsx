import type { ButtonHTMLAttributes } from 'react';
import { useReadOnly } from '../api/queries';

/** Why a write control is disabled for a viewer (a read-only administrator). */
export const READ_ONLY_REASON = 'Read-only: your role is viewer';

/** On every page with write controls: shown to a viewer only, saying why nothing can be changed. */
export function ReadOnlyNotice() {
  if (!useReadOnly()) return null;
  return (
    <p className="notice info read-only" id="read-only-reason">
      <strong>{READ_ONLY_REASON}.</strong> You can see everything on this page; changes need an administrator.
    </p>
  );
}

/**
 * A button that changes something: disabled for a viewer, with `READ_ONLY_REASON` as its description (and tooltip).
 * Otherwise a plain button with the given props.
 */
export function WriteButton(props: ButtonHTMLAttributes<HTMLButtonElement>) {
  const readOnly = useReadOnly();
  const { disabled, title, ...rest } = props;
  return (
    <button
      type="button"
      {...rest}
      disabled={readOnly || disabled}
      title={readOnly ? READ_ONLY_REASON : title}
      aria-description={readOnly ? READ_ONLY_REASON : undefined}
    />
  );
}
