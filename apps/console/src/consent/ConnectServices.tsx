import { Logo } from '../components/AgentLogo';
import type { ConsentService } from './consent-queries';
import { connectServiceUrl } from './navigation';

/**
 * The third-party accounts the agent's services need, each with its connection status, and Connect
 * for those not connected yet: a full navigation to the broker's third-party authorize route,
 * which comes back to this page (with its request) afterwards. MCP servers are not listed here:
 * they have no account to connect.
 */
export function ConnectServices({ services, agentId, sessionToken }: { services: readonly ConsentService[]; agentId: string; sessionToken: string | null }) {
  if (services.length === 0) return null;
  const missing = services.some((service) => service.connection_status === 'not_connected');
  return (
    <section className="panel consent-connect" aria-labelledby="consent-connect">
      <h2 id="consent-connect">Third-party accounts</h2>
      <p className="consent-muted">
        The agent can use a service only with your account there.
        {missing ? ' Connect now and you come back to this page, or connect later from Connections.' : ''}
      </p>
      <ul className="consent-connect-list" aria-label="Third-party accounts">
        {services.map((service) => (
          <li key={service.id}>
            <Logo url={service.logo_url} name={service.display_name} />
            <span className="consent-service-name">{service.display_name}</span>
            {service.connection_status === 'connected' ? (
              <span className="badge success">Connected</span>
            ) : (
              <>
                <span className="badge warning">Not connected</span>
                <a className="button" href={connectServiceUrl(service.id, agentId, sessionToken)}>
                  Connect<span className="visually-hidden"> {service.display_name}</span>
                </a>
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
