import { Link, useLocation } from 'react-router';
import { EmptyState } from '../components/EmptyState';
import { PageTitle } from '../components/PageTitle';
import { ReadOnlyNotice } from '../components/ReadOnly';
import { NewButton, ScopeChips } from './ListParts';
import { useServices } from './queries';
import { authMethodWords } from './service-form';
import './registry.css';

/** `/services`: every third-party service, with what an admin checks at a glance. */
export function ServicesPage() {
  const services = useServices();
  const deleted = (useLocation().state as { deleted?: string } | null)?.deleted;
  return (
    <>
      <PageTitle
        title="Services"
        lead="Third-party APIs with their own OAuth provider. People connect their account; agents act on it with the tokens the broker holds for them."
        actions={<NewButton to="/services/new" label="Register a service" />}
      />
      <ReadOnlyNotice />
      {deleted !== undefined ? (
        <div className="notice success" role="status">
          {deleted} is deleted.
        </div>
      ) : null}
      {services.isPending ? (
        <p className="loading" role="status">
          Loading services…
        </p>
      ) : services.isError ? (
        <div className="notice danger" role="alert">
          The services could not be loaded: {services.error.message}
        </div>
      ) : services.data.length === 0 ? (
        <EmptyState title="No services yet">
          <p>
            Register the first one with its provider&apos;s issuer URL, the client ID and secret the provider gave the
            broker, and the scopes people will be asked for.
          </p>
        </EmptyState>
      ) : (
        <ul className="list registry-list" aria-label="Services">
          {services.data.map((service) => (
            <li key={service.id} className="card">
              <div className="card-body">
                <Link className="card-title" to={`/services/${service.id}`}>
                  {service.display_name}
                </Link>
                {service.description ? <p className="muted">{service.description}</p> : null}
                <dl className="facts">
                  <div>
                    <dt>Issuer</dt>
                    <dd className="mono">{service.issuer_uri}</dd>
                  </div>
                  <div>
                    <dt>Client ID</dt>
                    <dd className="mono">{service.client_id}</dd>
                  </div>
                  <div>
                    <dt>Authenticates with</dt>
                    <dd>{authMethodWords(service.token_endpoint_auth_method)}</dd>
                  </div>
                  <div>
                    <dt>Scopes</dt>
                    <dd>
                      <ScopeChips scopes={service.scopes.map((s) => s.scope)} />
                    </dd>
                  </div>
                  <div>
                    <dt>Protected resources</dt>
                    <dd className="mono">
                      {service.protected_resources.length === 0 ? 'None' : service.protected_resources.join(', ')}
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
