import { useRef, useState } from 'react';
import { useRevokeDelegation } from '../api/queries';
import { ConfirmDialog } from '../components/ConfirmDialog';

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/** How many of the person's approvals of one agent a revocation ends; undefined while they are not read yet. */
export interface ApprovalsOfAgent {
  /** Remembered decisions: Always allow / Always deny. */
  readonly remembered: number | undefined;
  /** Requests waiting for the person's decision. */
  readonly waiting: number | undefined;
}

/**
 * What a revocation ends, in words, one line each: the dialog's list (`done` false: what will end) and the
 * confirmation (`done` true: what ended).
 */
function whatEnds(liveSessions: number, approvals: ApprovalsOfAgent, done: boolean): string[] {
  const ends: string[] = [];
  const verb = (count: number, one: string, many: string, past: string) => (done ? past : count === 1 ? one : many);
  if (liveSessions > 0)
    ends.push(
      `${liveSessions === 1 ? 'Its active sign-in' : `Its ${liveSessions} active sign-ins`} ${verb(liveSessions, 'ends', 'end', 'ended')}.`,
    );
  const { remembered, waiting } = approvals;
  if (remembered === undefined || waiting === undefined)
    ends.push(
      `Its remembered decisions (Always allow / Always deny) and the requests it is waiting on ${done ? 'ended' : 'end'} too.`,
    );
  else {
    if (remembered > 0)
      ends.push(
        `${plural(remembered, 'remembered decision', 'remembered decisions')} (Always allow / Always deny) for this agent ${verb(remembered, 'ends', 'end', 'ended')} too.`,
      );
    if (waiting > 0)
      ends.push(
        `${plural(waiting, 'request', 'requests')} waiting for your approval ${verb(waiting, 'is', 'are', waiting === 1 ? 'was' : 'were')} withdrawn.`,
      );
  }
  return ends;
}

/** Revoke with a confirmation that says what stops working. */
export function RevokeButton({
  agentId,
  name,
  liveSessions,
  approvals,
  onRevoked,
}: {
  agentId: string;
  name: string;
  liveSessions: number;
  approvals: ApprovalsOfAgent;
  onRevoked: (text: string) => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const ends = whatEnds(liveSessions, approvals, false);
  const revoke = useRevokeDelegation(agentId, {
    onMutate: () => setFailure(null),
    onSuccess: () => {
      dialog.current?.close();
      onRevoked(
        `Revoked access for ${name}: it can no longer act for you or ask you to approve its actions. ${whatEnds(liveSessions, approvals, true).join(' ')} Your connected accounts stay connected.`.replace(
          /\s+/g,
          ' ',
        ),
      );
    },
    onError: setFailure,
  });
  return (
    <>
      <button
        type="button"
        className="button danger"
        aria-label={`Revoke access for ${name}`}
        onClick={() => {
          setFailure(null);
          dialog.current?.showModal();
        }}
      >
        Revoke
      </button>
      <ConfirmDialog
        dialogRef={dialog}
        id={`revoke-${agentId}`}
        title={`Revoke access for ${name}?`}
        confirmLabel="Revoke access"
        busy={revoke.isPending}
        failure={failure}
        onConfirm={() => revoke.mutate()}
      >
        <p>{name} will no longer be able to act for you. At once:</p>
        <ul className="ends">
          <li>Every service you granted it stops working for it.</li>
          {ends.map((line) => (
            <li key={line}>{line}</li>
          ))}
          <li>It can no longer ask you to approve its actions.</li>
        </ul>
        <p>
          Your connected accounts stay connected. If you allow {name} again, it starts with no remembered decisions.
        </p>
      </ConfirmDialog>
    </>
  );
}
