import { Logo } from '../components/AgentLogo';
import type { ConsentService, PermissionSet } from './consent-queries';

/** Mandatory (and require-all-scopes) sets are fixed on; optional ones are the person's choice. */
export function isRequired(set: PermissionSet): boolean {
  return set.requirement_type !== 'optional';
}

/** The scopes of one service in a set, in the service's own words, with the scope code in small mono. */
function ScopeList({ scopes, service }: { scopes: readonly string[]; service: ConsentService | undefined }) {
  const words = new Map((service?.permissions ?? []).map((p) => [p.scope, p.description]));
  return (
    <ul className="consent-scopes">
      {scopes.map((scope) => {
        const description = words.get(scope) ?? scope;
        return (
          <li key={scope}>
            {description !== scope ? <span>{description}</span> : null}
            <code className="consent-scope-code">{scope}</code>
          </li>
        );
      })}
    </ul>
  );
}

function ConnectionBadge({ service }: { service: ConsentService | undefined }) {
  if (service === undefined) return null;
  return service.connection_status === 'connected' ? <span className="badge success">Connected</span> : <span className="badge warning">Not connected</span>;
}

/** The permission sets the agent asks for, each with its services and scopes; optional ones selectable. */
export function PermissionSetList({
  sets,
  services,
  selected,
  onToggle,
  disabled,
}: {
  sets: readonly PermissionSet[];
  services: ReadonlyMap<string, ConsentService>;
  selected: ReadonlySet<string>;
  onToggle: (setId: string, on: boolean) => void;
  disabled: boolean;
}) {
  if (sets.length === 0) return <p className="consent-muted">This agent asks for no permissions yet: its administrator has assigned none.</p>;
  return (
    <ul className="consent-set-list">
      {sets.map((set) => {
        const required = isRequired(set);
        const inputId = `consent-set-${set.id}`;
        const described = [`${inputId}-requirement`, set.description.length > 0 ? `${inputId}-description` : null].filter((id) => id !== null).join(' ');
        return (
          <li key={set.id} className={`consent-set${required || selected.has(set.id) ? ' is-on' : ''}`}>
            <div className="consent-set-head">
              <input id={inputId} type="checkbox" checked={required || selected.has(set.id)} disabled={required || disabled} aria-describedby={described} onChange={(event) => onToggle(set.id, event.target.checked)} />
              <label htmlFor={inputId} className="consent-set-name">
                {set.name}
              </label>
              <span id={`${inputId}-requirement`} className={`badge${required ? '' : ' optional'}`}>
                {required ? 'Required' : 'Optional'}
              </span>
            </div>
            {set.description.length > 0 ? (
              <p id={`${inputId}-description`} className="consent-set-description">
                {set.description}
              </p>
            ) : null}
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
                    <ScopeList scopes={entry.scopes} service={service} />
                  </li>
                );
              })}
            </ul>
          </li>
        );
      })}
    </ul>
  );
}
