import { Logo } from '../components/AgentLogo';
import type { ConsentResource, ConsentService, PermissionSet } from './types';

/** Mandatory (and require-all-scopes) sets are fixed on; optional ones are the person's choice. */
export function isRequired(set: PermissionSet): boolean {
  return set.requirement_type !== 'optional';
}

/** What marks what the request asks for: in words, not by colour alone. */
export const ASKED = 'Asked for now';

function AskedBadge() {
  return <span className="badge requested">{ASKED}</span>;
}

/**
 * The scopes of one service or MCP server in a set, in its own words, with the scope code in small
 * mono; those the request's `scope` names (RFC 6749 §3.3) marked as asked for.
 */
export function ScopeList({
  scopes,
  described,
  asked,
}: {
  scopes: readonly string[];
  described: ConsentService | ConsentResource | undefined;
  asked?: ReadonlySet<string>;
}) {
  const words = new Map((described?.permissions ?? []).map((p) => [p.scope, p.description]));
  return (
    <ul className="consent-scopes">
      {scopes.map((scope) => {
        const description = words.get(scope) ?? scope;
        return (
          <li key={scope}>
            {description !== scope ? <span>{description}</span> : null}
            <code className="consent-scope-code">{scope}</code>
            {asked?.has(scope) ? (
              <>
                {' '}
                <AskedBadge />
              </>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}

/** The set's MCP servers, or only those in `only`. */
function shown(set: PermissionSet, only: ReadonlySet<string> | undefined) {
  return set.resources.filter((entry) => only === undefined || only.has(entry.resource_id));
}

/** Connected, or nothing: "Not connected" is said once, beside Connect under "Third-party accounts". */
function ConnectionBadge({ service }: { service: ConsentService | undefined }) {
  if (service === undefined || service.connection_status !== 'connected') return null;
  return <span className="badge success">Connected</span>;
}

/**
 * An MCP server in a set, shown here only (not again elsewhere on the page): name, whether the
 * request asks for it, its resource URI as text (never a link), what it is, its scopes; nothing
 * to connect.
 */
function ResourceEntry({
  entry,
  resource,
  asked,
}: {
  entry: { scopes: readonly string[] };
  resource: ConsentResource | undefined;
  asked: ReadonlySet<string> | undefined;
}) {
  const name = resource?.display_name ?? 'Unknown MCP server';
  return (
    <li className="consent-service consent-resource">
      <div className="consent-service-head">
        <Logo url={resource?.logo_url} name={name} />
        <span className="consent-service-name">{name}</span>
        {resource?.requested ? <AskedBadge /> : null}
        {resource?.granted ? <span className="badge success">Allowed before</span> : null}
        <span className="badge">MCP server</span>
      </div>
      {resource !== undefined ? (
        <p className="mono consent-resource-uri">
          <span className="visually-hidden">Address: </span>
          <span>{resource.resource_uri}</span>
        </p>
      ) : null}
      {resource?.description ? <p className="consent-resource-description">{resource.description}</p> : null}
      {entry.scopes.length > 0 ? (
        <ScopeList scopes={entry.scopes} described={resource} asked={asked} />
      ) : (
        <p className="consent-muted consent-resource-none">No specific permissions.</p>
      )}
    </li>
  );
}

/** Whether the sets, as shown, mark anything as asked for (then the list says what the mark means). */
function marksAsked(
  sets: readonly PermissionSet[],
  resources: ReadonlyMap<string, ConsentResource>,
  only: ReadonlySet<string> | undefined,
  asked: ReadonlySet<string> | undefined,
): { any: boolean; mcp: boolean } {
  let any = false;
  let mcp = false;
  for (const set of sets) {
    for (const entry of shown(set, only)) {
      mcp = true;
      if (resources.get(entry.resource_id)?.requested || entry.scopes.some((scope) => asked?.has(scope))) any = true;
    }
    if (only === undefined && set.services.some((entry) => entry.scopes.some((scope) => asked?.has(scope)))) any = true;
  }
  return { any, mcp };
}

/**
 * The permission sets the agent asks for, each with its services and MCP servers and their scopes;
 * optional ones selectable. With `only`, each set shows just those MCP servers (incremental consent).
 */
export function PermissionSetList({
  sets,
  services,
  resources,
  selected,
  onToggle,
  disabled,
  only,
  asked,
  agentName,
}: {
  sets: readonly PermissionSet[];
  services: ReadonlyMap<string, ConsentService>;
  resources: ReadonlyMap<string, ConsentResource>;
  selected: ReadonlySet<string>;
  onToggle: (setId: string, on: boolean) => void;
  disabled: boolean;
  only?: ReadonlySet<string>;
  /** The scopes the pending request names, if it names any. */
  asked?: ReadonlySet<string>;
  agentName: string;
}) {
  if (sets.length === 0)
    return (
      <p className="consent-muted">This agent asks for no permissions yet: its administrator has assigned none.</p>
    );
  const marks = marksAsked(sets, resources, only, asked);
  return (
    <>
      {marks.any ? (
        <p className="consent-muted consent-asked-legend">
          Marked “{ASKED}”: what {agentName} asks for in this request. The rest comes with the same permission set.
        </p>
      ) : null}
      <ul className="consent-set-list">
        {sets.map((set) => {
          const required = isRequired(set);
          const inputId = `consent-set-${set.id}`;
          // Incremental consent shows the set by name only, with the MCP servers asked for.
          const description = only === undefined ? set.description : '';
          const described = [`${inputId}-requirement`, description.length > 0 ? `${inputId}-description` : null]
            .filter((id) => id !== null)
            .join(' ');
          const mcp = shown(set, only);
          return (
            <li key={set.id} className={`consent-set${required || selected.has(set.id) ? ' is-on' : ''}`}>
              <div className="consent-set-head">
                <input
                  id={inputId}
                  type="checkbox"
                  checked={required || selected.has(set.id)}
                  disabled={required || disabled}
                  aria-describedby={described}
                  onChange={(event) => onToggle(set.id, event.target.checked)}
                />
                <label htmlFor={inputId} className="consent-set-name">
                  {set.name}
                </label>
                <span id={`${inputId}-requirement`} className={`badge${required ? '' : ' optional'}`}>
                  {required ? 'Required' : 'Optional'}
                </span>
              </div>
              {description.length > 0 ? (
                <p id={`${inputId}-description`} className="consent-set-description">
                  {description}
                </p>
              ) : null}
              {only === undefined && set.services.length > 0 ? (
                <ul className="consent-service-list" aria-label={`Services in ${set.name}`}>
                  {set.services.map((entry) => {
                    const service = services.get(entry.service_id);
                    const name = service?.display_name ?? 'Unknown service';
                    return (
                      <li key={entry.service_id} className="consent-service">
                        <div className="consent-service-head">
                          <Logo url={service?.logo_url} name={name} />
                          <span className="consent-service-name">{name}</span>
                          <ConnectionBadge service={service} />
                        </div>
                        <ScopeList scopes={entry.scopes} described={service} asked={asked} />
                      </li>
                    );
                  })}
                </ul>
              ) : null}
              {mcp.length > 0 ? (
                <ul className="consent-service-list" aria-label={`MCP servers in ${set.name}`}>
                  {mcp.map((entry) => (
                    <ResourceEntry
                      key={entry.resource_id}
                      entry={entry}
                      resource={resources.get(entry.resource_id)}
                      asked={asked}
                    />
                  ))}
                </ul>
              ) : null}
            </li>
          );
        })}
      </ul>
      {marks.mcp ? (
        <p className="consent-muted consent-mcp-explained">
          An MCP server is a service whose tools the agent calls for you over the Model Context Protocol; this broker
          lets the agent in, so there is no account to connect.
        </p>
      ) : null}
    </>
  );
}
