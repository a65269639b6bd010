import { useState } from 'react';
import { usePendingApprovals, useRememberedApprovals } from '../api/queries';
import { RevokeButton } from '../agents/RevokeButton';
import type { Grant } from './types';

/**
 * The agent's page while the broker's administrators have suspended it (docs/admin-api.md "Suspending an agent"):
 * it says so, and offers nothing to press but revoking what the person allowed (allowing is refused until it is
 * resumed; what was allowed is kept).
 */
export function SuspendedAgent({
  agentId,
  name,
  grant,
  liveSessions,
}: {
  agentId: string;
  name: string;
  grant: Grant | null;
  liveSessions: number | undefined;
}) {
  const [revoked, setRevoked] = useState<string | null>(null);
  const remembered = useRememberedApprovals();
  const waiting = usePendingApprovals();
  const count = (list: readonly { agent_id: string }[] | undefined) =>
    list?.filter((approval) => approval.agent_id === agentId).length;
  return (
    <section className="panel suspended-agent" aria-labelledby="suspended-heading">
      <h2 id="suspended-heading">Suspended by your administrators</h2>
      <p>
        Your administrators have suspended {name} for now. It cannot act for you, use your connected accounts or ask you
        for anything until they resume it.
      </p>
      <div role="status">{revoked !== null ? <p className="notice success">{revoked}</p> : null}</div>
      {grant !== null ? (
        <>
          <p>
            What you allowed it is kept and works again if they resume it. If you no longer want {name} to act for you,
            revoke its access.
          </p>
          <div className="actions">
            <RevokeButton
              agentId={agentId}
              name={name}
              liveSessions={liveSessions ?? 0}
              approvals={{ remembered: count(remembered.data?.data), waiting: count(waiting.data?.data) }}
              onRevoked={setRevoked}
            />
          </div>
        </>
      ) : revoked === null ? (
        <p>You have not allowed it to act for you, so there is nothing to revoke.</p>
      ) : null}
    </section>
  );
}
