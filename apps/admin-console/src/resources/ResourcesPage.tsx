import { Link, useLocation } from 'react-router';
import { EmptyState } from '../components/EmptyState';
import { PageTitle } from '../components/PageTitle';
import { ReadOnlyNotice } from '../components/ReadOnly';
import { NewButton, ScopeChips } from '../services/ListParts';
import { useResources } from './queries';
import '../services/registry.css';

/** `/mcp-servers`: every MCP server (protected resource) the broker issues tokens for. */
export function ResourcesPage() {
  const resources = useResources();
  const deleted = (useLocation().state as { deleted?: string } | null)?.deleted;
  return (
    <>
      <PageTitle
        title="MCP servers"
        lead="MCP servers and APIs the broker is the authorization server of: agents get tokens for them from the broker, limited to the scopes each offers."
        actions={<NewButton to="/mcp-servers/new" label="Register an MCP server" />}
      />
      <ReadOnlyNotice />
      {deleted !== undefined ? (
        <div className="notice success" role="status">
          {deleted} is deleted.
        </div>
      ) : null}
      {resources.isPending ? (
        <p className="loading" role="status">
          Loading MCP servers…
        </p>
      ) : resources.isError ? (
        <div className="notice danger" role="alert">
          The MCP servers could not be loaded: {resources.error.message}
        </div>
      ) : resources.data.items.length === 0 ? (
        <EmptyState title="No MCP servers yet">
          <p>
            Register one with its resource URI (the address its metadata names) and the scopes it offers, each described
            for the consent page.
          </p>
        </EmptyState>
      ) : (
        <ul className="list registry-list" aria-label="MCP servers">
          {resources.data.items.map((resource) => (
            <li key={resource.id} className="card">
              <div className="card-body">
                <Link className="card-title" to={`/mcp-servers/${resource.id}`}>
                  {resource.display_name}
                </Link>
                {resource.description ? <p className="muted">{resource.description}</p> : null}
                <dl className="facts">
                  <div>
                    <dt>Resource URI</dt>
                    <dd className="mono">{resource.resource_uri}</dd>
                  </div>
                  <div>
                    <dt>Scopes</dt>
                    <dd>
                      <ScopeChips scopes={resource.scopes.map((s) => s.scope)} />
                    </dd>
                  </div>
                </dl>
              </div>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
