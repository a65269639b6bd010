import { Logo } from '../components/AgentLogo';
import type { ConsentService } from './consent-queries';
import { connectServiceUrl } from './navigation';

/**
 * The agent's services the person has not connected yet, each with Connect: a full navigation to the
 * broker's third-party authorize route, which comes back to this page (with its request) afterwards.
 */
export function ConnectServices({ services, agentId, sessionToken }: { services: readonly ConsentService[]; agentId: string; sessionToken: string | null }) {
  const missing = services.filter((service) => service.connection_status === 'not_connected');
  if (missing.length === 0) return null;
  return (
    <section className="panel consent-connect" aria-labelledby="consent-connect">
      <h2 id="consent-connect">Accounts not connected yet</h2>
      <p className="consent-muted">The agent can use a service only with your account there. Connect now and you come back to this page, or connect later from Connections.</p>
      <ul className="consent-connect-list">
        {missing.map((service) => (
          <li key={service.id}>
            <Logo url={service.logo_url} name={service.display_name} />
            <span className="consent-service-name">{service.display_name}</span>
            <a className="button" href={connectServiceUrl(service.id, agentId, sessionToken)}>
              Connect<span className="visually-hidden"> {service.display_name}</span>
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}
