import type { ReactNode } from 'react';
import { formatDate, hostOf } from '../format';
import { KIND_LABELS, actorPhrase, outcomeBadge, type ActivityEvent } from './kinds';
import type { Names } from './names';
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

/** The details worth showing for the event's kind, in words (never raw JSON). */
function details(event: ActivityEvent, names: Names): ReactNode[] {
  const d = event.details;
  const out: ReactNode[] = [];
  const serviceNames = (ids: string[]) => ids.map((id) => names.services.get(id) ?? 'a removed service').join(', ');
  switch (event.type) {
    case 'token.exchanged': {
      const resource = text(d, 'resource');
      if (resource !== null)
        out.push(
          <Detail key="resource" label="Resource">
            <span className="mono">{resource}</span>
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
            {resources.map((id) => names.resources.get(id) ?? 'an MCP server').join(', ')}
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
            <span className="mono">{resources.join(', ')}</span>
          </Detail>,
        );
      break;
    }
    case 'session.connected': {
      const scopes = list(d, 'scopes');
      if (scopes.length > 0)
        out.push(
          <Detail key="scopes" label="Scopes">
            <span className="mono">{scopes.join(' ')}</span>
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
      const tool = text(d, 'tool_name');
      if (tool !== null)
        out.push(
          <Detail key="tool" label="Tool">
            <span className="mono">{tool}</span>
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
      break;
    }
    case 'enterprise_access.decided':
    case 'enterprise_access.revoked': {
      const resource = text(d, 'resource');
      if (resource !== null)
        out.push(
          <Detail key="resource" label="MCP server">
            <span className="mono">{resource}</span>
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
          <Detail key="scopes" label="Scopes">
            <span className="mono">{scopes.join(' ')}</span>
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
  const service = event.service_id === null ? null : (names.services.get(event.service_id) ?? 'a removed service');
  const oauthError = event.outcome === 'failure' ? text(event.details, 'oauth_error') : null;
  const shown = details(event, names);
  const badge = outcomeBadge(event.type, event.outcome);
  return (
    <li className="card activity-item">
      <div className="card-body">
        <div className="activity-heading">
          <h3 className="activity-title">{KIND_LABELS[event.type] ?? event.type}</h3>
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
