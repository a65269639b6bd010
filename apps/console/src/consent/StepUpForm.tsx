import { useMemo, type FormEvent } from 'react';
import { formatDate } from '../format';
import { ConsentError } from './ConsentError';
import type { AgentDetail, ConsentResource, Grant } from './types';
import { useRequestAnswer } from './request-answer';
import { useSelection } from './selection';
import { isRequired, PermissionSetList } from './PermissionSetList';
import { setsCovering, widenedGrant } from './step-up';

/** "A", "A and B", "A, B and C". */
export function namesInWords(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1] ?? ''}`;
}

/**
 * Incremental consent: the person already allowed the agent, and its authorization request asks
 * for MCP servers the grant does not delegate yet. Only those servers and the permission sets
 * covering them are offered; Allow adds them to the grant, everything allowed before stays as it
 * is, and so does its expiry. Deny declines this request only.
 */
export function StepUpForm({
  agentId,
  detail,
  grant,
  sessionToken,
  pending,
  deadline,
  onExpired,
  onSending,
  asked,
}: {
  agentId: string;
  detail: AgentDetail;
  grant: Grant;
  sessionToken: string;
  pending: readonly ConsentResource[];
  /** When the request stops being answerable (ms, this browser's clock). */
  deadline: number | null;
  /** The request turned out to have expired (on pressing Allow or Deny). */
  onExpired: () => void;
  /** An answer is on its way (true) or came back refused (false): the request does not time out under it. */
  onSending?: (sending: boolean) => void;
  /** The scopes the request names, marked as asked for. */
  asked?: ReadonlySet<string>;
}) {
  const agentName = detail.agent.display_name;
  const pendingIds = useMemo(() => new Set(pending.map((resource) => resource.id)), [pending]);
  const sets = useMemo(() => setsCovering(detail.permission_sets, pendingIds), [detail.permission_sets, pendingIds]);
  const services = useMemo(() => new Map(detail.services.map((service) => [service.id, service])), [detail.services]);
  const resources = useMemo(() => new Map(detail.resources.map((resource) => [resource.id, resource])), [detail]);
  // The request asks for these servers: the sets covering them start ticked, optional ones can be unticked.
  const [selected, toggle] = useSelection(() => new Set(sets.map((set) => set.id)));
  const { allow, busy, leaving, failure, answerable, send, decline } = useRequestAnswer(agentId, sessionToken, {
    deadline,
    onExpired,
    onSending,
  });
  const chosen = sets.filter((set) => isRequired(set) || selected.has(set.id));

  function submit(event: FormEvent) {
    event.preventDefault();
    if (busy || chosen.length === 0 || !answerable()) return;
    // The grant is replaced as a whole: what it delegates now, plus the servers asked for; same expiry.
    send({
      granted_permission_sets: widenedGrant(grant.granted_permission_sets, chosen, pendingIds),
      valid_until: grant.valid_until,
    });
  }

  const names = namesInWords(pending.map((resource) => resource.display_name));
  return (
    <form
      className="consent-form"
      onSubmit={submit}
      noValidate
      aria-label={`Decide whether ${agentName} may use ${names}`}
    >
      <section className="panel consent-permissions" aria-labelledby="consent-permissions">
        <h2 id="consent-permissions">What it asks for now</h2>
        <p className="notice consent-return consent-stays" role="note">
          What you allowed {agentName} before stays allowed
          {grant.valid_until === null ? ', with no expiry' : `, until ${formatDate(grant.valid_until)}`}. Allow adds
          only what is below, for the same time.
        </p>
        <fieldset className="consent-plain" aria-labelledby="consent-permissions" disabled={busy}>
          <PermissionSetList
            sets={sets}
            services={services}
            resources={resources}
            selected={selected}
            onToggle={toggle}
            disabled={busy}
            only={pendingIds}
            asked={asked}
            agentName={agentName}
          />
        </fieldset>
      </section>
      {failure !== null ? <ConsentError error={failure} withRequest /> : null}
      <div className="panel consent-decision">
        <p className="consent-decision-hint" role="status">
          {leaving ??
            (chosen.length === 0
              ? 'Choose at least one permission set to allow.'
              : `${agentName} will also be able to use ${names}.`)}
        </p>
        <div className="actions">
          <button type="button" className="button danger" disabled={busy} onClick={decline}>
            Deny
          </button>
          <button type="submit" className="button primary" disabled={busy || chosen.length === 0}>
            {allow.isPending ? 'Allowing…' : 'Allow'}
          </button>
        </div>
      </div>
    </form>
  );
}
