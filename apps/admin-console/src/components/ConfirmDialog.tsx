import { useEffect, useId, useRef, type ReactNode } from 'react';
import type { ApiFailure } from '../api/client';

/**
 * A modal confirmation (native `<dialog>`: focus kept inside, Escape cancels) of a change: the title names it, the
 * body says what stops (which tokens, which people), the failure of the last attempt if any, Cancel and the action.
 * `destructive` colours the action as a danger. Open while `open` is true; `onCancel` when dismissed.
 */
export function ConfirmDialog(props: {
  readonly open: boolean;
  readonly title: string;
  readonly children: ReactNode;
  readonly confirmLabel: string;
  readonly destructive?: boolean;
  readonly busy?: boolean;
  readonly failure?: ApiFailure | null;
  readonly onConfirm: () => void;
  readonly onCancel: () => void;
}) {
  const {
    open,
    title,
    children,
    confirmLabel,
    destructive = false,
    busy = false,
    failure,
    onConfirm,
    onCancel,
  } = props;
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={() => open && onCancel()}>
      <h2 id={titleId}>{title}</h2>
      <div className="dialog-body">{children}</div>
      {failure !== null && failure !== undefined ? (
        <p className="notice danger" role="alert">
          {failure.message}
        </p>
      ) : null}
      <div className="actions">
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          className={destructive ? 'button danger-solid' : 'button primary'}
          disabled={busy}
          onClick={onConfirm}
        >
          {busy ? 'Working…' : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
