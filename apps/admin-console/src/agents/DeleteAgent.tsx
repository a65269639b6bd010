import { useState } from 'react';
import { useNavigate } from 'react-router';
import { ApiFailure } from '../api/client';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ConflictNotice } from '../components/ConflictNotice';
import { WriteButton } from '../components/ReadOnly';
import { asSentence } from '../components/words';
import { useDeleteAgent } from './queries';
import type { Agent } from './types';

/**
 * Delete the agent, confirmed: irreversible (its grants and client credentials go with it), unlike Suspend. A 409
 * is said in words beside the button; the agents list says the deletion happened.
 */
export function DeleteAgent({ agent }: { readonly agent: Agent }) {
  const navigate = useNavigate();
  const [asking, setAsking] = useState(false);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const name = agent.display_name;
  const remove = useDeleteAgent(agent.id, {
    onMutate: () => setFailure(null),
    onSuccess: () => {
      setAsking(false);
      void navigate('/agents', { state: { deleted: name } });
    },
    onError: (error) => {
      const refused = error as ApiFailure;
      setFailure(refused);
      // A conflict is explained on the page, not in the dialog: what to change first is there.
      if (refused instanceof ApiFailure && refused.status === 409) setAsking(false);
    },
  });
  const conflict = failure !== null && failure.status === 409 ? failure : null;
  return (
    <section className="panel agent-section danger-zone" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete this agent</h2>
      <p>
        Deleting cannot be undone: every person&apos;s grant, its client credentials and its enterprise authorizations
        go with it, and people have to allow a re-registered agent anew. To stop it for now, suspend it instead.
      </p>
      {conflict !== null ? (
        <ConflictNotice
          what={`${name} cannot be deleted now.`}
          why={`${asSentence(conflict.message)} Change that first, then delete it.`}
        />
      ) : null}
      <div className="actions start">
        <WriteButton
          className="button danger"
          onClick={() => {
            setFailure(null);
            setAsking(true);
          }}
        >
          Delete agent
        </WriteButton>
      </div>
      <ConfirmDialog
        open={asking}
        title={`Delete ${name}?`}
        confirmLabel="Delete agent"
        destructive
        busy={remove.isPending}
        failure={conflict === null ? failure : null}
        onConfirm={() => remove.mutate()}
        onCancel={() => setAsking(false)}
      >
        <p>
          <strong>This cannot be undone.</strong> Every person&apos;s access to {name} ends and its tokens are refused;
          its client credentials stop working; its enterprise authorizations and remembered approvals go with it.
        </p>
        <p>Suspend keeps all of that and can be undone.</p>
      </ConfirmDialog>
    </section>
  );
}
