import { Link } from 'react-router';
import { actorWords, kindLabel } from '../activity/kinds';
import { EmptyState } from '../components/EmptyState';
import { ago, date, dateTime, days } from '../components/format';
import { PageTitle } from '../components/PageTitle';
import { ErrorView, Loading } from '../errors/ErrorView';
import { useOverview, type Overview } from './overview';

const STATUS: Record<Overview['status'], { label: string; tone: string; words: string }> = {
  healthy: { label: 'Healthy', tone: 'success', words: 'Answering requests; its database is reachable.' },
  starting: { label: 'Starting', tone: 'warning', words: 'Still starting: requests may be refused for a moment.' },
  unhealthy: {
    label: 'Unhealthy',
    tone: 'danger',
    words: 'A dependency (the database) does not answer: token requests fail. The broker log says more.',
  },
  shutting_down: { label: 'Shutting down', tone: 'warning', words: 'Finishing requests before it stops.' },
};

const MODE: Record<Overview['mode'], { label: string; words: string }> = {
  local: { label: 'Local', words: 'The broker is the authorization server: it signs the access tokens agents get.' },
  proxy: {
    label: 'Proxy',
    words: "Your identity provider issues the tokens; the broker checks them and adds the services' tokens.",
  },
  hybrid: {
    label: 'Hybrid',
    words: 'Both: the broker signs its own tokens and also accepts those of your identity provider.',
  },
};

/** Where to act on a warning (its message names the config key and says what is wrong). */
const WARNING_ACTIONS: Readonly<Record<string, { to: string; label: string }>> = {
  signing_key_due: { to: '/signing-keys', label: 'Rotate the signing key' },
};

function Warnings({ warnings }: { readonly warnings: Overview['warnings'] }) {
  if (warnings.length === 0)
    return (
      <p className="notice success" role="status">
        Nothing needs your attention.
      </p>
    );
  return (
    <section aria-labelledby="warnings-heading" className="warnings">
      <h2 id="warnings-heading">Needs your attention</h2>
      <ul className="list">
        {warnings.map(({ code, message }) => {
          const action = WARNING_ACTIONS[code];
          return (
            <li key={code} className="notice warning">
              {message}
              {action !== undefined ? (
                <>
                  {' '}
                  <Link to={action.to}>{action.label}</Link>
                </>
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function Counts({ counts }: { readonly counts: Overview['counts'] }) {
  const items: { to: string; value: number; label: string; note?: string }[] = [
    {
      to: '/agents',
      value: counts.agents,
      label: counts.agents === 1 ? 'Agent' : 'Agents',
      note: counts.suspended_agents > 0 ? `${counts.suspended_agents} suspended` : undefined,
    },
    { to: '/services', value: counts.services, label: counts.services === 1 ? 'Service' : 'Services' },
    { to: '/mcp-servers', value: counts.resources, label: counts.resources === 1 ? 'MCP server' : 'MCP servers' },
    {
      to: '/permission-sets',
      value: counts.permission_sets,
      label: counts.permission_sets === 1 ? 'Permission set' : 'Permission sets',
    },
    {
      to: '/activity',
      value: counts.active_grants,
      label: counts.active_grants === 1 ? 'Active grant' : 'Active grants',
    },
    {
      to: '/activity',
      value: counts.pending_approvals,
      label: counts.pending_approvals === 1 ? 'Pending approval' : 'Pending approvals',
    },
  ];
  return (
    <section aria-labelledby="counts-heading">
      <h2 id="counts-heading">Registered and in use</h2>
      <ul className="counts">
        {items.map(({ to, value, label, note }) => (
          <li key={label} className="count-card">
            <Link to={to}>
              <span className="count-value">{value}</span>
              <span className="count-label">{label}</span>
            </Link>
            {note !== undefined ? <span className="badge warning">{note}</span> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A fresh install: the steps from nothing to a person's first grant. */
function GettingStarted() {
  return (
    <EmptyState title="Get started">
      <p>Nothing is registered yet. An agent can act for people once these exist:</p>
      <ol className="steps">
        <li>
          <Link to="/agents/new">Register an agent</Link> and give it client credentials.
        </li>
        <li>
          <Link to="/services/new">Add a service</Link> (a third-party API the agent calls for people, such as a
          calendar).
        </li>
        <li>
          <Link to="/mcp-servers/new">Add an MCP server</Link> the agent's tools run on.
        </li>
        <li>
          <Link to="/permission-sets/new">Create a permission set</Link> naming what people can grant the agent.
        </li>
      </ol>
    </EmptyState>
  );
}

function SigningKeys({ overview }: { readonly overview: Overview }) {
  return (
    <section aria-labelledby="keys-heading" className="panel">
      <div className="section-header">
        <h2 id="keys-heading">Signing keys</h2>
        <Link to="/signing-keys">Manage signing keys</Link>
      </div>
      {overview.mode === 'proxy' ? (
        <p className="muted">In proxy mode the broker signs no tokens: your identity provider's keys do.</p>
      ) : overview.signing_keys.length === 0 ? (
        <p className="muted">No signing key yet: the broker creates one when it first signs a token.</p>
      ) : (
        <div className="table-wrap">
          <table className="stacked">
            <thead>
              <tr>
                <th scope="col">Key id</th>
                <th scope="col">Algorithm</th>
                <th scope="col">Created</th>
                <th scope="col">Age</th>
              </tr>
            </thead>
            <tbody>
              {overview.signing_keys.map((key) => (
                <tr key={key.kid}>
                  <td data-label="Key id">
                    <code>{key.kid}</code> {key.is_current ? <span className="badge success">Current</span> : null}
                  </td>
                  <td data-label="Algorithm">{key.algorithm}</td>
                  <td data-label="Created">{date(key.created_at)}</td>
                  <td data-label="Age">{days(key.age_days)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function RecentActions({ events }: { readonly events: Overview['recent_admin_actions'] }) {
  return (
    <section aria-labelledby="recent-heading" className="panel">
      <div className="section-header">
        <h2 id="recent-heading">Recent admin actions</h2>
        <Link to="/activity">All activity</Link>
      </div>
      {events.length === 0 ? (
        <p className="muted">No administrator has changed anything yet.</p>
      ) : (
        <ul className="events">
          {events.map((event) => (
            <li key={event.id} className="event-line">
              <span className="event-what">{kindLabel(event.type)}</span>
              <span className="muted">by {actorWords(event.actor, () => undefined)}</span>
              <time dateTime={event.occurred_at} title={dateTime(event.occurred_at)} className="muted">
                {ago(event.occurred_at)}
              </time>
              {event.outcome === 'failure' ? <span className="badge danger">Failed</span> : null}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The broker at a glance: health and mode, what needs attention, what is registered, signing keys, recent changes. */
export function OverviewPage() {
  const overview = useOverview();
  return (
    <>
      <PageTitle title="Overview" lead="This broker at a glance, and what needs your attention." />
      {overview.isPending ? (
        <Loading label="Loading the overview…" />
      ) : overview.isError ? (
        <ErrorView error={overview.error} />
      ) : (
        <OverviewContent overview={overview.data} />
      )}
    </>
  );
}

function OverviewContent({ overview }: { readonly overview: Overview }) {
  const status = STATUS[overview.status];
  const mode = MODE[overview.mode];
  const fresh = overview.counts.agents === 0 && overview.counts.services === 0;
  return (
    <>
      <section aria-label="Health and mode" className="status-grid">
        <div className="panel stat">
          <h2 className="stat-label">Health</h2>
          <p>
            <span className={`badge ${status.tone}`}>{status.label}</span>
          </p>
          <p className="muted">{status.words}</p>
        </div>
        <div className="panel stat">
          <h2 className="stat-label">Mode</h2>
          <p>
            <span className="badge info">{mode.label}</span>
          </p>
          <p className="muted">{mode.words}</p>
        </div>
      </section>
      <Warnings warnings={overview.warnings} />
      {fresh ? <GettingStarted /> : null}
      <Counts counts={overview.counts} />
      <SigningKeys overview={overview} />
      <RecentActions events={overview.recent_admin_actions} />
    </>
  );
}
