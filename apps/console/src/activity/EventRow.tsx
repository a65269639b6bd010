import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { ApprovalNow } from '../api/queries';
import { toolTitle } from '../approvals/request-context';
import { formatDate, hostOf } from '../format';
import {
  KIND_LABELS,
  accessRequestSentence,
  actorPhrase,
  outcomeBadge,
  requestBadge,
  requestOutcomeWords,
  type ActivityEvent,
} from './kinds';
import type { Named, Names } from './names';
import { relativeTime } from './time';

/** A details field read defensively: the API types `details` per kind in the README, not in the schema. */
function text(details: Record<string, unknown>, key: string): string | null {
  const value = details[key];
  return typeof value === 'string' && value !== '' ? value : null;
}

function list(details: Record<string, unknown>, key: string): string[] {
  const value = details[key];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

const REFRESH_TRIGGERS: Record<string, string> = {
  exchange: 'when an agent needed it',
  proactive: 'ahead of expiry',
  forced: 'on request',
};
const PERSISTENCE: Record<string, string> = {
  once: 'this call only',
  session: 'for the agent session',
  permanent: 'always',
};

/** One labelled detail ("Resource: https://…"); values are text, never HTML. */
function Detail({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="activity-detail">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** Scopes in the words the registry gives them, each code small beside its words; a code without words as it is. */
function Scopes({
  scopes,
  described,
}: {
  scopes: readonly string[];
  described: ReadonlyMap<string, string> | undefined;
}) {
  return (
    <ul className="activity-scopes">
      {scopes.map((scope) => {
        const words = described?.get(scope);
        return (
          <li key={scope}>
            {words === undefined ? (
              <span className="mono">{scope}</span>
            ) : (
              <>
                {words} <span className="mono activity-code">{scope}</span>
              </>
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** An address an event carries: the registered MCP server's name, its address small beside it; else the address. */
function Address({ uri, named }: { uri: string; named: Named | undefined }) {
  if (named === undefined) return <span className="mono">{uri}</span>;
  return (
    <>
      {named.name} <span className="mono activity-code">{uri}</span>
    </>
  );
}

/** The tool of an approval event: the gateway's title for it, its name small beside; else its name. */
function Tool({ name, now }: { name: string; now: ApprovalNow | undefined }) {
  const title = now?.kind === 'found' ? toolTitle(now.approval) : name;
  if (title === name) return <span className="mono">{name}</span>;
  return (
    <>
      {title} <span className="mono activity-code">{name}</span>
    </>
  );
}

/** What became of an approval request since, in words, with the way to it: review it while it waits, else see it. */
function RequestNow({ id, now }: { id: string; now: ApprovalNow | undefined }) {
  if (now === undefined || now.kind === 'gone') return null;
  if (now.kind === 'expired')
    return <Detail label="Since">It expired before you decided; the agent can ask again.</Detail>;
  const { approval } = now;
  const at = approval.revoked_at ?? approval.denied_at ?? approval.approved_at;
  const decided = requestOutcomeWords(approval);
  return (
    <Detail label={decided === null ? 'Now' : 'Since'}>
      {decided === null ? (
        <Link to={`/approvals/${encodeURIComponent(id)}`}>Review it</Link>
      ) : (
        <>
          {decided}
          {at === null ? '' : ` (${formatDate(at)})`}.{' '}
          <Link to={`/approvals/${encodeURIComponent(id)}`}>
            {approval.approved_at === null && approval.denied_at === null ? 'See the request' : 'See the decision'}
          </Link>
        </>
      )}
    </Detail>
  );
}

/** The details worth showing for the event's kind, in words (never raw JSON). */
function details(event: ActivityEvent, names: Names): ReactNode[] {
  const d = event.details;
  const out: ReactNode[] = [];
  const serviceNames = (ids: string[]) =>
    ids.map((id) => names.services.get(id)?.name ?? 'a removed service').join(', ');
  switch (event.type) {
    case 'token.exchanged': {
      const resource = text(d, 'resource');
      if (resource !== null)
        out.push(
          <Detail key="resource" label={names.resourcesByUri.has(resource) ? 'MCP server' : 'Resource'}>
            <Address uri={resource} named={names.resourcesByUri.get(resource)} />
          </Detail>,
        );
      break;
    }
    case 'impersonation.decided': {
      const audience = text(d, 'audience');
      if (audience !== null)
        out.push(
          <Detail key="audience" label="For">
            <span className="mono">{audience}</span>
          </Detail>,
        );
      break;
    }
    case 'grant.created':
    case 'grant.replaced': {
      const services = list(d, 'service_ids');
      if (services.length > 0)
        out.push(
          <Detail key="services" label="Services">
            {serviceNames(services)}
          </Detail>,
        );
      const resources = list(d, 'resource_ids');
      if (resources.length > 0)
        out.push(
          <Detail key="resources" label="MCP servers">
            {resources.map((id) => names.resources.get(id)?.name ?? 'a removed MCP server').join(', ')}
          </Detail>,
        );
      out.push(
        <Detail key="until" label="Until">
          {text(d, 'valid_until') === null ? 'no expiry' : formatDate(text(d, 'valid_until'))}
        </Detail>,
      );
      break;
    }
    case 'grant.expired':
      out.push(
        <Detail key="until" label="Expired at">
          {formatDate(text(d, 'valid_until'))}
        </Detail>,
      );
      break;
    case 'consent.denied': {
      const resources = list(d, 'resources');
      if (resources.length > 0)
        out.push(
          <Detail key="resources" label="It asked for">
            {resources.map((uri, index) => (
              <span key={uri}>
                {index > 0 ? ', ' : ''}
                <Address uri={uri} named={names.resourcesByUri.get(uri)} />
              </span>
            ))}
          </Detail>,
        );
      break;
    }
    case 'session.connected': {
      const scopes = list(d, 'scopes');
      if (scopes.length > 0)
        out.push(
          <Detail key="scopes" label="Permissions">
            <Scopes
              scopes={scopes}
              described={event.service_id === null ? undefined : names.services.get(event.service_id)?.scopes}
            />
          </Detail>,
        );
      break;
    }
    case 'session.refreshed':
    case 'session.needs_reauthentication': {
      const trigger = text(d, 'trigger');
      if (trigger !== null)
        out.push(
          <Detail key="trigger" label="When">
            {REFRESH_TRIGGERS[trigger] ?? trigger}
          </Detail>,
        );
      break;
    }
    case 'approval.requested':
    case 'approval.approved':
    case 'approval.denied':
    case 'approval.consumed':
    case 'approval.revoked':
    case 'approval.expired': {
      const approvalId = text(d, 'approval_id');
      const now = approvalId === null ? undefined : names.approvals.get(approvalId);
      const tool = text(d, 'tool_name');
      if (tool !== null)
        out.push(
          <Detail key="tool" label="Tool">
            <Tool name={tool} now={now} />
          </Detail>,
        );
      const persistence = text(d, 'persistence');
      if (persistence !== null)
        out.push(
          <Detail key="persistence" label="Allowed">
            {PERSISTENCE[persistence] ?? persistence}
          </Detail>,
        );
      const risk = text(d, 'risk_level');
      if (risk !== null)
        out.push(
          <Detail key="risk" label="Risk">
            {risk}
          </Detail>,
        );
      const args = list(d, 'argument_names');
      if (args.length > 0)
        out.push(
          <Detail key="args" label="Arguments">
            <span className="mono">{args.join(', ')}</span>
          </Detail>,
        );
      if (event.type === 'approval.requested' && approvalId !== null)
        out.push(<RequestNow key="now" id={approvalId} now={now} />);
      break;
    }
    case 'enterprise_access.decided':
    case 'enterprise_access.revoked': {
      const resource = text(d, 'resource');
      const server = resource === null ? undefined : names.resourcesByUri.get(resource);
      if (resource !== null)
        out.push(
          <Detail key="resource" label="MCP server">
            <Address uri={resource} named={server} />
          </Detail>,
        );
      const issuer = text(d, 'issuer');
      if (issuer !== null)
        out.push(
          <Detail key="issuer" label="Allowed by">
            <span className="mono">{hostOf(issuer)}</span>
          </Detail>,
        );
      const scopes = list(d, 'scopes');
      if (scopes.length > 0)
        out.push(
          <Detail key="scopes" label="Permissions">
            <Scopes scopes={scopes} described={server?.scopes} />
          </Detail>,
        );
      break;
    }
    case 'authorization_request.created':
    case 'authorization_request.completed':
    case 'authorization_request.denied':
    case 'authorization_request.expired':
    case 'authorization_request.misdirected': {
      const scopes = list(d, 'scopes');
      if (scopes.length > 0)
        out.push(
          <Detail key="scopes" label="Permissions">
            <Scopes
              scopes={scopes}
              described={event.service_id === null ? undefined : names.services.get(event.service_id)?.scopes}
            />
          </Detail>,
        );
      if (event.type === 'authorization_request.created' && d.needs_connection === true)
        out.push(
          <Detail key="connection" label="Also needed">
            Your account there (connecting it)
          </Detail>,
        );
      break;
    }
    // The kind, the agent and the service say it all. No `default`: a kind the API adds fails lint here
    // (switch-exhaustiveness-check over the generated type) until it is given its details or listed below.
    case 'grant.revoked':
    case 'session.disconnected':
    case 'client_credentials.issued':
    case 'client_credentials.rotated':
    case 'client_credentials.revoked':
    case 'signing_key.added':
    case 'signing_key.promoted':
    case 'signing_key.removed':
    case 'agent.created':
    case 'agent.changed':
    case 'agent.deleted':
    case 'agent.suspended':
    case 'agent.resumed':
    case 'service.created':
    case 'service.changed':
    case 'service.deleted':
    case 'resource.created':
    case 'resource.changed':
    case 'resource.deleted':
    case 'permission_set.created':
    case 'permission_set.changed':
    case 'permission_set.deleted':
    case 'refresh_token.issued':
    case 'refresh_token.rotated':
    case 'refresh_token.reused':
    case 'refresh_token.revoked':
    case 'access_token.revoked':
      break;
  }
  return out;
}

/** One event of the person's activity: when, what (and how it ended), which agent and service, and its details. */
export function EventRow({ event, names, now }: { event: ActivityEvent; names: Names; now: Date }) {
  const agent = event.agent_id === null ? null : (names.agents.get(event.agent_id) ?? 'a removed agent');
  const service =
    event.service_id === null ? null : (names.services.get(event.service_id)?.name ?? 'a removed service');
  const oauthError = event.outcome === 'failure' ? text(event.details, 'oauth_error') : null;
  const shown = details(event, names);
  const approvalId = text(event.details, 'approval_id');
  const badge =
    event.type === 'approval.requested' && event.outcome === 'success'
      ? requestBadge(approvalId === null ? undefined : names.approvals.get(approvalId))
      : outcomeBadge(event.type, event.outcome);
  return (
    <li className="card activity-item">
      <div className="card-body">
        <div className="activity-heading">
          <h3 className="activity-title">
            {accessRequestSentence(event.type, agent, service, text(event.details, 'opener')) ??
              KIND_LABELS[event.type] ??
              event.type}
          </h3>
          <span className={`badge${badge.tone === '' ? '' : ` ${badge.tone}`}`}>{badge.label}</span>
          {oauthError !== null ? <span className="mono activity-error">{oauthError}</span> : null}
        </div>
        <div className="meta">
          <time dateTime={event.occurred_at} title={formatDate(event.occurred_at)}>
            {relativeTime(event.occurred_at, now)} · {formatDate(event.occurred_at)}
          </time>
          {agent !== null ? <span>Agent: {agent}</span> : null}
          {service !== null ? <span>Service: {service}</span> : null}
          <span>{capitalize(actorPhrase(event.actor, agent))}</span>
        </div>
        {shown.length > 0 ? <dl className="activity-details">{shown}</dl> : null}
      </div>
    </li>
  );
}

function capitalize(phrase: string): string {
  return phrase.slice(0, 1).toUpperCase() + phrase.slice(1);
}
