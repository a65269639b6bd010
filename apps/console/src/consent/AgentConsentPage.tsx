import { useCallback, useEffect, useState } from 'react';
import { useParams } from 'react-router';
import { ApiFailure } from '../api/client';
import { useAgentDetail, useCurrentGrant, useDelegations } from '../api/queries';
import { Logo } from '../components/AgentLogo';
import { ErrorView, InvalidLink, isUuid, Loading } from '../errors/ErrorView';
import { useFocusedPage } from '../components/focus';
import { usePageTitle } from '../components/page-title';
import { AccountNote } from './AccountNote';
import { formatDate } from '../format';
import { AgentAbout, CimdIdentity } from './AgentIdentity';
import { AnsweredRequest } from './AnsweredRequest';
import { ConsentError } from './ConsentError';
import { ConsentForm } from './ConsentForm';
import { ExpiredRequest } from './ExpiredRequest';
import { LostRequest } from './LostRequest';
import { pendingResources } from './step-up';
import { namesInWords, StepUpForm } from './StepUpForm';
import { SuspendedAgent } from './SuspendedAgent';
import { useConsentParams } from './consent-params';
import { requestedScopes, returnHost } from './navigation';
import { forgetRequest, rememberRequest } from './pending-request';
import { requestDeadline, useDeadlinePassed } from './request-expiry';
import type { AgentDetail, Grant } from './types';

/** `/agents/:id` (with or without `?session_token=`): who the agent is and what the person allows it. */
export function AgentConsentPage() {
  const { id = '' } = useParams();
  // A mistyped or cut link is said in words, not with the API's validation message.
  if (!isUuid(id)) return <InvalidLink what="agent" />;
  // Another agent is another page: nothing (a request, a selection) carries over.
  return <AgentConsent key={id} agentId={id} />;
}

function AgentConsent({ agentId }: { agentId: string }) {
  const [params, setParams] = useConsentParams(agentId);
  const { sessionToken, connectedServiceId, connectFailure = null, marked } = params;
  const detail = useAgentDetail(agentId, sessionToken);
  const grant = useCurrentGrant(agentId);
  // The grant as the page first read it decides between the full form and incremental consent:
  // Allow refreshes the grant, and switching forms then would drop Allow's return to the application.
  const [grantAtLoad, setGrantAtLoad] = useState<Grant | null | undefined>(undefined);
  if (grantAtLoad === undefined && grant.data !== undefined) setGrantAtLoad(grant.data);
  // The agents list says how many sign-ins of this agent are live (never a token).
  const delegations = useDelegations();
  const liveSessions = delegations.data?.data.find((item) => item.agent_id === agentId)?.live_sessions;
  // The request is kept for the tab while it waits for an answer (pending-request.ts), and
  // forgotten once it is answered, expired or not this person's.
  const context = sessionToken !== null ? detail.data?.authorization_context : undefined;
  const agentName = detail.data?.agent.display_name;
  // The request ends by a timer when its time is up (the broker's seconds left, counted from the read).
  const deadline =
    context !== undefined && context !== null && context.answered === undefined
      ? requestDeadline(detail.dataUpdatedAt, context.expires_in)
      : null;
  const timedOut = useDeadlinePassed(deadline);
  // Allow or Deny answered `session_expired`: the broker's clock said so first.
  const [refusedAsExpired, setRefusedAsExpired] = useState(false);
  // An Allow or Deny on its way when the time is up is not cut off: its answer decides (a refusal as expired included).
  const [sending, setSending] = useState(false);
  const expired = deadline !== null && ((timedOut && !sending) || refusedAsExpired);
  const onExpired = useCallback(() => setRefusedAsExpired(true), []);
  const pendingUntil = deadline !== null && !expired ? new Date(deadline).toISOString() : undefined;
  const finished =
    expired ||
    (context !== undefined && context !== null && context.answered !== undefined) ||
    (detail.error instanceof ApiFailure && (detail.error.code === 'session_expired' || detail.error.status === 403));
  useEffect(() => {
    if (sessionToken !== null && pendingUntil !== undefined && agentName !== undefined)
      rememberRequest({ agentId, agentName, sessionToken, expiresAt: pendingUntil });
    else if (finished) forgetRequest(agentId);
  }, [agentId, agentName, sessionToken, pendingUntil, finished]);
  // The agent's own page, without the request (and without the address's request mark).
  const dropRequest = () => {
    forgetRequest(agentId);
    setParams({ sessionToken: null, connectedServiceId: null, marked: false });
  };
  // A request's address without its request: said so, never a grant nothing would send back.
  const lost = marked && sessionToken === null;

  // A request is a focused page (no application navigation around the decision); the agent's own page is not.
  useFocusedPage(sessionToken !== null || lost);
  const asked =
    sessionToken !== null &&
    detail.data?.authorization_context != null &&
    detail.data.authorization_context.answered == null;
  usePageTitle(
    detail.data === undefined
      ? 'Agent'
      : expired
        ? 'Request expired'
        : lost
          ? 'Request no longer here'
          : asked
            ? `Allow ${detail.data.agent.display_name}?`
            : detail.data.agent.display_name,
  );

  if (detail.isError)
    return (
      <ConsentError
        error={detail.error}
        withRequest={sessionToken !== null}
        onDropRequest={sessionToken !== null ? dropRequest : undefined}
        asPage
      />
    );
  if (detail.isPending || grant.isPending) return <Loading label="Loading the agent…" />;
  if (grant.isError) return <ErrorView error={grant.error} />;

  const { agent, cimd, services, authorization_context } = detail.data;
  if (agent.suspended) return <SuspendedPage agent={agent} grant={grant.data} liveSessions={liveSessions} />;
  if (lost)
    return <LostRequest agentName={agent.display_name} logoUrl={agent.logo_url ?? null} onReview={dropRequest} />;
  if (expired && sessionToken !== null)
    return (
      <ExpiredRequest
        agentId={agentId}
        agentName={agent.display_name}
        logoUrl={agent.logo_url ?? cimd?.logo_uri}
        sessionToken={sessionToken}
        host={returnHost(authorization_context?.original_url)}
        onReview={dropRequest}
      />
    );
  // A request already answered (Allow, Deny) is shown as such: never decided twice.
  const answered = sessionToken !== null ? (authorization_context?.answered ?? null) : null;
  const withRequest = sessionToken !== null && authorization_context !== null && answered === null;
  const connected = connectedServiceId === null ? undefined : services.find((s) => s.id === connectedServiceId);
  const host = withRequest ? returnHost(authorization_context.original_url) : null;
  const askedScopes = withRequest ? requestedScopes(authorization_context.original_url) : undefined;
  // Incremental consent: allowed before, and the request asks for MCP servers not delegated yet.
  const earlier = grantAtLoad ?? null;
  const pending = withRequest ? pendingResources(detail.data, earlier !== null) : [];
  const stepUp =
    pending.length > 0 && earlier !== null && sessionToken !== null ? { grant: earlier, sessionToken } : null;
  return (
    <div className="consent-page">
      <header className="consent-header">
        <Logo url={agent.logo_url ?? cimd?.logo_uri} name={agent.display_name} />
        <div>
          <h1>
            {stepUp !== null
              ? `Allow ${agent.display_name} to use ${namesInWords(pending.map((resource) => resource.display_name))}?`
              : withRequest
                ? `${agent.display_name} wants to act for you`
                : agent.display_name}
          </h1>
          <p className="consent-muted">
            {answered !== null
              ? `${agent.display_name} asked to act for you.`
              : stepUp !== null
                ? `You allowed ${agent.display_name} before. It now asks for more: review it, then allow or deny.`
                : withRequest
                  ? 'Review what it asks for, then allow or deny.'
                  : grant.data !== null
                    ? `You allowed this agent; last changed ${formatDate(grant.data.updated_at)}${signIns(liveSessions)}. Change or confirm its access below.`
                    : 'This agent does not act for you. You can allow it below.'}
          </p>
        </div>
      </header>
      {withRequest ? <AccountNote /> : null}
      {connected !== undefined ? (
        <p className="notice success" role="status">
          {connected.display_name} is connected.
        </p>
      ) : null}
      {host !== null ? (
        <p className="notice consent-return">
          After you decide you go back to <strong className="mono">{host}</strong>.
        </p>
      ) : null}
      {cimd !== null ? (
        <CimdIdentity cimd={cimd} agentName={agent.display_name} newClient={withRequest && grant.data !== null} />
      ) : null}
      <AgentAbout agent={agent} />
      {answered !== null ? (
        <AnsweredRequest answer={answered} onReview={dropRequest} />
      ) : stepUp !== null ? (
        <StepUpForm
          agentId={agentId}
          detail={detail.data}
          grant={stepUp.grant}
          sessionToken={stepUp.sessionToken}
          pending={pending}
          deadline={deadline}
          onExpired={onExpired}
          onSending={setSending}
          asked={askedScopes}
        />
      ) : (
        <ConsentForm
          agentId={agentId}
          detail={detail.data}
          grant={grant.data}
          sessionToken={withRequest ? sessionToken : null}
          connectFailure={connectFailure}
          deadline={withRequest ? deadline : null}
          onExpired={onExpired}
          onSending={setSending}
          asked={askedScopes}
        />
      )}
    </div>
  );
}

/** `; 2 active sign-ins` (sign-ins that renew the agent's access without asking again), or nothing before it is known. */
function signIns(count: number | undefined): string {
  if (count === undefined) return '';
  return count === 0 ? '; no active sign-in' : `; ${count} active sign-in${count === 1 ? '' : 's'}`;
}

/** A suspended agent's page: who it is, that its administrators suspended it, and revoking (docs/admin-api.md). */
function SuspendedPage({
  agent,
  grant,
  liveSessions,
}: {
  agent: AgentDetail['agent'];
  grant: Grant | null;
  liveSessions: number | undefined;
}) {
  return (
    <div className="consent-page">
      <header className="consent-header">
        <Logo url={agent.logo_url} name={agent.display_name} />
        <div>
          <h1>{agent.display_name}</h1>
          <p className="consent-muted">It does not act for you while it is suspended.</p>
        </div>
      </header>
      <SuspendedAgent agentId={agent.id} name={agent.display_name} grant={grant} liveSessions={liveSessions} />
      <AgentAbout agent={agent} />
    </div>
  );
}
