import type { ReactNode, RefObject } from 'react';
import { ErrorView } from '../errors/ErrorView';

/**
 * A modal confirmation of a destructive action (native <dialog>: focus trapped, Escape
 * cancels): what changes, the failure of the last attempt if any, Cancel and the action.
 */
export function ConfirmDialog(props: {
  readonly dialogRef: RefObject<HTMLDialogElement | null>;
  readonly id: string;
  readonly title: ReactNode;
  readonly children: ReactNode;
  readonly confirmLabel: string;
  readonly busy: boolean;
  readonly failure: unknown;
  readonly onConfirm: () => void;
  readonly onClose?: () => void;
}) {
  const { dialogRef, id, title, children, confirmLabel, busy, failure, onConfirm, onClose } = props;
  return (
    <dialog ref={dialogRef} aria-labelledby={id} onClose={onClose}>
      <h2 id={id}>{title}</h2>
      {children}
      {failure !== null && failure !== undefined ? <ErrorView error={failure} /> : null}
      <div className="actions">
        <button type="button" className="button" onClick={() => dialogRef.current?.close()}>
          Cancel
        </button>
        <button type="button" className="button danger" disabled={busy} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
