import './agents.css';
import { Link, useLocation, useSearchParams } from 'react-router';
import { useReadOnly } from '../api/queries';
import { EmptyState } from '../components/EmptyState';
import { PageTitle } from '../components/PageTitle';
import { READ_ONLY_REASON, ReadOnlyNotice, WriteButton } from '../components/ReadOnly';
import { ErrorView, Loading } from '../errors/ErrorView';
import { matchesSearch } from './search';
import { formatDate, plural } from './format';
import { useAgents } from './queries';
import type { Agent } from './types';

/** "New agent": a link to the form, or for a viewer a disabled button saying why. */
function NewAgentAction() {
  if (useReadOnly())
    return (
      <WriteButton className="button primary" title={READ_ONLY_REASON}>
        New agent
      </WriteButton>
    );
  return (
    <Link className="button primary" to="/agents/new">
      New agent
    </Link>
  );
}

/** `/agents`: every registered agent, searchable by name, canonical id or client id; suspended ones badged. */
export function AgentsPage() {
  const agents = useAgents();
  const [params, setParams] = useSearchParams();
  const location = useLocation();
  const deleted = (location.state as { deleted?: string } | null)?.deleted;
  const search = params.get('q') ?? '';
  const shown = (agents.data ?? []).filter((agent) => matchesSearch(agent, search));
  return (
    <>
      <PageTitle
        title="Agents"
        lead="The AI agents registered with this broker: what they may ask people for, their credentials, and who allowed them."
        actions={<NewAgentAction />}
      />
      {typeof deleted === 'string' ? (
        <p className="notice success" role="status">
          {deleted} is deleted.
        </p>
      ) : null}
      <ReadOnlyNotice />
      {agents.isPending ? <Loading label="Loading agents…" /> : null}
      {agents.isError ? <ErrorView error={agents.error} /> : null}
      {agents.data?.length === 0 ? (
        <EmptyState title="No agents yet" action={<NewAgentAction />}>
          <p>
            Register the first agent: its name and what it may ask for, then its client credentials. People then allow
            it on their consent page.
          </p>
        </EmptyState>
      ) : null}
      {agents.data !== undefined && agents.data.length > 0 ? (
        <>
          <div className="search" role="search">
            <label htmlFor="agent-search">Search agents</label>
            <input
              id="agent-search"
              type="search"
              value={search}
              placeholder="Name, canonical id or client id"
              aria-describedby="agent-search-count"
              autoComplete="off"
              spellCheck={false}
              onChange={(event) =>
                setParams(event.target.value === '' ? {} : { q: event.target.value }, { replace: true })
              }
            />
            <p className="muted" id="agent-search-count" role="status">
              {search === ''
                ? plural(agents.data.length, 'agent', 'agents')
                : `${plural(shown.length, 'agent matches', 'agents match')} “${search}”`}
            </p>
          </div>
          {shown.length > 0 ? (
            <ul className="list agent-list" aria-label="Agents">
              {shown.map((agent) => (
                <AgentItem key={agent.id} agent={agent} />
              ))}
            </ul>
          ) : (
            <p>No agent has that name, canonical id or client id.</p>
          )}
        </>
      ) : null}
    </>
  );
}

function AgentItem({ agent }: { readonly agent: Agent }) {
  const suspended = agent.suspension !== null && agent.suspension !== undefined;
  return (
    <li className="card">
      <div className="card-body">
        <div className="card-title">
          <Link to={`/agents/${agent.id}`}>{agent.display_name}</Link>
          {suspended ? <span className="badge danger">Suspended</span> : null}
        </div>
        <div className="meta">
          {agent.canonical_id !== null ? (
            <span>
              Canonical id <span className="mono">{agent.canonical_id}</span>
            </span>
          ) : null}
          {agent.client_id !== null ? (
            <span>
              Upstream client id <span className="mono">{agent.client_id}</span>
            </span>
          ) : null}
          <span>{plural(agent.permission_sets.length, 'permission set', 'permission sets')}</span>
          <span>Changed {formatDate(agent.updated_at)}</span>
        </div>
      </div>
    </li>
  );
}
