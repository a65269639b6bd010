import { Link, useLocation } from 'react-router';
import { EmptyState } from '../components/EmptyState';
import { PageTitle } from '../components/PageTitle';
import { ReadOnlyNotice } from '../components/ReadOnly';
import { useResources } from '../resources/queries';
import { useServices } from '../services/queries';
import { NewButton } from '../services/ListParts';
import { requirementWords } from './permission-set-form';
import { usePermissionSets } from './queries';
import '../services/registry.css';

/** `/permission-sets`: every set with what it covers, by name. */
export function PermissionSetsPage() {
  const sets = usePermissionSets();
  const services = useServices();
  const resources = useResources();
  const deleted = (useLocation().state as { deleted?: string } | null)?.deleted;
  const serviceName = (id: string) => services.data?.find((s) => s.id === id)?.display_name ?? 'A deleted service';
  const resourceName = (id: string) =>
    resources.data?.items.find((r) => r.id === id)?.display_name ?? 'A deleted MCP server';
  return (
    <>
      <PageTitle
        title="Permission sets"
        lead="What agents may ask people for. An agent is assigned sets; a person allows or refuses each on the consent page."
        actions={<NewButton to="/permission-sets/new" label="New permission set" />}
      />
      <ReadOnlyNotice />
      {deleted !== undefined ? (
        <div className="notice success" role="status">
          {deleted} is deleted.
        </div>
      ) : null}
      {sets.isPending ? (
        <p className="loading" role="status">
          Loading permission sets…
        </p>
      ) : sets.isError ? (
        <div className="notice danger" role="alert">
          The permission sets could not be loaded: {sets.error.message}
        </div>
      ) : sets.data.items.length === 0 ? (
        <EmptyState title="No permission sets yet">
          <p>Register a service or an MCP server first, then make a set of its scopes and assign it to agents.</p>
        </EmptyState>
      ) : (
        <ul className="list registry-list" aria-label="Permission sets">
          {sets.data.items.map((set) => (
            <li key={set.id} className="card">
              <div className="card-body">
                <Link className="card-title" to={`/permission-sets/${set.id}`}>
                  {set.name}
                </Link>
                {set.description ? <p className="muted">{set.description}</p> : null}
                <ul className="coverage" aria-label={`What ${set.name} covers`}>
                  {set.service_scopes.map((entry) => (
                    <li key={entry.service_id}>
                      <strong>{serviceName(entry.service_id)}</strong> (service):{' '}
                      <span className="mono">{entry.scopes.length === 0 ? 'no scopes' : entry.scopes.join(', ')}</span>
                      <span className="muted"> · {requirementWords(entry.requirement_type)}</span>
                    </li>
                  ))}
                  {set.resource_scopes.map((entry) => (
                    <li key={entry.resource_id}>
                      <strong>{resourceName(entry.resource_id)}</strong> (MCP server):{' '}
                      <span className="mono">{entry.scopes.join(', ')}</span>
                      <span className="muted"> · {requirementWords(entry.requirement_type)}</span>
                    </li>
                  ))}
                </ul>
              </div>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
