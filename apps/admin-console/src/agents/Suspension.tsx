import { useState } from 'react';
import type { ApiFailure } from '../api/client';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { WriteButton } from '../components/ReadOnly';
import { formatDate } from './format';
import { useResumeAgent, useSuspendAgent } from './queries';
import type { Agent, Suspension } from './types';

/** The reason's limit, as the API's. */
const REASON_MAX = 500;

/** What a suspension stops, said in the suspend dialog and on a suspended agent's page. */
function WhatStops({ name }: { readonly name: string }) {
  return (
    <ul className="stops">
      <li>Token exchanges for {name} are refused, on every replica.</li>
      <li>Its own token requests and refreshes are refused; its tokens read as inactive on introspection.</li>
      <li>Its tool approvals, consent pages and authorization requests are refused.</li>
    </ul>
  );
}

/** A suspended agent's state, at the top of its page: since when, by whom, why, and that resume restores it. */
export function SuspendedNotice({ suspension, name }: { readonly suspension: Suspension; readonly name: string }) {
  return (
    <div className="notice warning suspended-notice" role="status">
      <p>
        <strong>
          {name} is suspended since {formatDate(suspension.suspended_at)}, by {suspension.suspended_by}.
        </strong>
        {suspension.reason !== null ? ` Reason: ${suspension.reason}` : null}
      </p>
      <p>
        Everything it does is refused. Nothing was deleted: its grants, connections, credentials and remembered
        decisions come back as they were when it is resumed.
      </p>
    </div>
  );
}

/**
 * Suspend (every token, exchange and approval of the agent refused at once, nothing deleted) or Resume (everything
 * back as it was), each confirmed in a dialog saying so.
 */
export function SuspendButton({ agent }: { readonly agent: Agent }) {
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState('');
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const handlers = {
    onMutate: () => setFailure(null),
    onSuccess: () => {
      setAsking(false);
      setReason('');
    },
    onError: (error: unknown) => setFailure(error as ApiFailure),
  };
  const suspend = useSuspendAgent(agent.id, handlers);
  const resume = useResumeAgent(agent.id, handlers);
  const name = agent.display_name;
  const open = () => {
    setFailure(null);
    setAsking(true);
  };
  if (agent.suspension !== null && agent.suspension !== undefined)
    return (
      <>
        <WriteButton className="button primary" onClick={open}>
          Resume
        </WriteButton>
        <ConfirmDialog
          open={asking}
          title={`Resume ${name}?`}
          confirmLabel="Resume agent"
          busy={resume.isPending}
          failure={failure}
          onConfirm={() => resume.mutate()}
          onCancel={() => setAsking(false)}
        >
          <p>
            <strong>Everything is restored exactly as it was</strong>: people&apos;s grants and connections, its client
            credentials, its refresh tokens and remembered approval decisions work again at once.
          </p>
          <p>Revoked grants and tokens that expired meanwhile stay gone.</p>
        </ConfirmDialog>
      </>
    );
  return (
    <>
      <WriteButton className="button danger" onClick={open}>
        Suspend
      </WriteButton>
      <ConfirmDialog
        open={asking}
        title={`Suspend ${name}?`}
        confirmLabel="Suspend agent"
        destructive
        busy={suspend.isPending}
        failure={failure}
        onConfirm={() => suspend.mutate(reason.trim() === '' ? null : reason.trim())}
        onCancel={() => setAsking(false)}
      >
        <p>
          <strong>Everything {name} does stops at once:</strong>
        </p>
        <WhatStops name={name} />
        <p>
          Nothing is deleted: resuming restores its grants, connections, credentials and tokens exactly as they were.
        </p>
        <div className="field">
          <label htmlFor="suspension-reason">Reason (optional)</label>
          <p className="field-hint" id="suspension-reason-hint">
            Shown with the suspension and in the activity, up to {REASON_MAX} characters.
          </p>
          <textarea
            id="suspension-reason"
            rows={2}
            maxLength={REASON_MAX}
            aria-describedby="suspension-reason-hint"
            value={reason}
            onChange={(event) => setReason(event.target.value)}
          />
        </div>
      </ConfirmDialog>
    </>
  );
}
