import './agents.css';
import { useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import type { ApiFailure } from '../api/client';
import { useReadOnly } from '../api/queries';
import { PageTitle } from '../components/PageTitle';
import { ReadOnlyNotice } from '../components/ReadOnly';
import { ErrorView, Loading } from '../errors/ErrorView';
import { AgentForm } from './AgentForm';
import { AgentGrants } from './AgentGrants';
import { EMPTY_AGENT, valuesOf } from './agent-form';
import { ClientCredentials } from './ClientCredentials';
import { DeleteAgent } from './DeleteAgent';
import { EnterpriseAuthorizations } from './EnterpriseAuthorizations';
import { formatDate } from './format';
import { useAgent, useCreateAgent, useReplaceAgent } from './queries';
import { SuspendButton, SuspendedNotice } from './Suspension';
import type { Agent } from './types';

/** `/agents/new` (no id): register an agent; `/agents/:id`: the agent, its credentials, grants and settings. */
export function AgentPage() {
  const { id } = useParams();
  return id === undefined ? <NewAgent /> : <AgentDetail key={id} id={id} />;
}

function BackLink() {
  return (
    <p className="back-link">
      <Link to="/agents">← Agents</Link>
    </p>
  );
}

function NewAgent() {
  const navigate = useNavigate();
  const readOnly = useReadOnly();
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const create = useCreateAgent({
    onMutate: () => setFailure(null),
    onSuccess: (agent) => void navigate(`/agents/${agent.id}`, { state: { created: true } }),
    onError: (error) => setFailure(error as ApiFailure),
  });
  return (
    <>
      <BackLink />
      <PageTitle
        title="New agent"
        lead="Register an agent people can allow to act for them. Its client credentials come next, on its page."
      />
      <ReadOnlyNotice />
      <AgentForm
        initial={EMPTY_AGENT}
        submitLabel="Register agent"
        busy={create.isPending}
        failure={failure}
        readOnly={readOnly}
        onSubmit={(body) => create.mutate(body)}
        onCancel={() => void navigate('/agents')}
      />
    </>
  );
}

function AgentDetail({ id }: { readonly id: string }) {
  const agent = useAgent(id);
  if (agent.isPending)
    return (
      <>
        <BackLink />
        <Loading label="Loading the agent…" />
      </>
    );
  if (agent.isError)
    return (
      <>
        <BackLink />
        <ErrorView error={agent.error} page />
      </>
    );
  return <AgentView agent={agent.data} />;
}

function AgentView({ agent }: { readonly agent: Agent }) {
  const location = useLocation();
  const created = (location.state as { created?: boolean } | null)?.created === true;
  const suspension = agent.suspension ?? null;
  return (
    <>
      <BackLink />
      <PageTitle
        title={agent.display_name}
        lead={
          <>
            {suspension !== null ? <span className="badge danger">Suspended</span> : null}{' '}
            <span className="muted-inline">
              Agent id <span className="mono">{agent.id}</span>
              {agent.canonical_id !== null ? (
                <>
                  {' '}
                  · canonical id <span className="mono">{agent.canonical_id}</span>
                </>
              ) : null}
            </span>
          </>
        }
        actions={<SuspendButton agent={agent} />}
      />
      {created ? (
        <p className="notice success" role="status">
          {agent.display_name} is registered. If it authenticates with a secret, create its client credentials below.
        </p>
      ) : null}
      {suspension !== null ? <SuspendedNotice suspension={suspension} name={agent.display_name} /> : null}
      <ReadOnlyNotice />
      <SectionLinks />
      <ClientCredentials agentId={agent.id} agentName={agent.display_name} />
      <AgentGrants agentId={agent.id} agentName={agent.display_name} />
      <EnterpriseAuthorizations agentId={agent.id} agentName={agent.display_name} />
      <AgentSettings agent={agent} />
      <DeleteAgent agent={agent} />
    </>
  );
}

const SECTIONS: readonly [string, string][] = [
  ['credentials-heading', 'Client credentials'],
  ['grants-heading', "People's grants"],
  ['enterprise-heading', 'Allowed by organisations'],
  ['settings-heading', 'Settings'],
  ['delete-heading', 'Delete'],
];

/** The agent page's sections, one jump away: the page is long, and an incident starts at the grants. */
function SectionLinks() {
  return (
    <nav className="section-links" aria-label="On this page">
      <ul>
        {SECTIONS.map(([id, label]) => (
          <li key={id}>
            <a href={`#${id}`}>{label}</a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** The agent's registration, edited in place; "Saved" once the API took it. */
function AgentSettings({ agent }: { readonly agent: Agent }) {
  const readOnly = useReadOnly();
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [saved, setSaved] = useState(false);
  const replace = useReplaceAgent(agent.id, {
    onMutate: () => {
      setFailure(null);
      setSaved(false);
    },
    onSuccess: () => setSaved(true),
    onError: (error) => setFailure(error as ApiFailure),
  });
  return (
    <section className="panel agent-section" aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <p className="muted">Last changed {formatDate(agent.updated_at)}. Saving replaces every field below.</p>
      {saved ? (
        <p className="notice success" role="status">
          Saved.
        </p>
      ) : null}
      {/* Filled again from what the API stored after each save (its normal form, duplicates removed). */}
      <AgentForm
        key={agent.updated_at}
        initial={valuesOf(agent)}
        submitLabel="Save changes"
        headingLevel="h3"
        busy={replace.isPending}
        failure={failure}
        readOnly={readOnly}
        onSubmit={(body) => replace.mutate(body)}
      />
    </section>
  );
}
