import { Logo } from '../components/AgentLogo';
import type { ConsentResource, PermissionSet } from './types';
import { ScopeList } from './PermissionSetList';

/** Per MCP server, the union of its scopes over the chosen sets. */
export function resourceScopes(chosen: readonly PermissionSet[]): Map<string, string[]> {
  const scopes = new Map<string, string[]>();
  for (const set of chosen)
    for (const entry of set.resources)
      scopes.set(entry.resource_id, [...new Set([...(scopes.get(entry.resource_id) ?? []), ...entry.scopes])]);
  return scopes;
}

/**
 * The MCP servers the chosen permission sets reach, apart from third-party accounts: the broker
 * is their authorization server (RFC 8707 resource indicators), so there is nothing to connect.
 * Each by name and resource URI (text, never a link), with its permissions in words.
 */
export function McpServers({
  resources,
  scopes,
  agentName,
}: {
  resources: readonly ConsentResource[];
  scopes: ReadonlyMap<string, readonly string[]>;
  agentName: string;
}) {
  if (resources.length === 0) return null;
  return (
    <section className="panel consent-mcp" aria-labelledby="consent-mcp">
      <h2 id="consent-mcp">MCP servers</h2>
      <p className="consent-muted">
        {agentName} may call these servers as you, with the permissions below. There is no account to connect.
      </p>
      <ul className="consent-mcp-list" aria-label="MCP servers">
        {resources.map((resource) => (
          <McpServer
            key={resource.id}
            resource={resource}
            scopes={scopes.get(resource.id) ?? []}
            agentName={agentName}
          />
        ))}
      </ul>
    </section>
  );
}

function McpServer({
  resource,
  scopes,
  agentName,
}: {
  resource: ConsentResource;
  scopes: readonly string[];
  agentName: string;
}) {
  return (
    <li className="consent-mcp-server">
      <div className="consent-service-head">
        <Logo url={resource.logo_url} name={resource.display_name} />
        <span className="consent-service-name">{resource.display_name}</span>
        {resource.requested ? <span className="badge requested">Requested by {agentName} now</span> : null}
        {resource.granted ? <span className="badge success">Allowed</span> : null}
      </div>
      <p className="mono consent-resource-uri">
        <span className="visually-hidden">Address: </span>
        <span>{resource.resource_uri}</span>
      </p>
      {resource.description !== null && resource.description.length > 0 ? (
        <p className="consent-resource-description">{resource.description}</p>
      ) : null}
      {scopes.length > 0 ? (
        <ScopeList scopes={scopes} described={resource} />
      ) : (
        <p className="consent-muted consent-resource-none">No specific permissions.</p>
      )}
    </li>
  );
}
