import { useEffect, useRef } from 'react';
import { Logo } from '../components/AgentLogo';
import { explainCallbackError } from '../connections/callback';
import type { ConsentService } from './types';
import { connectServiceUrl } from './navigation';

/** A Connect started from the consent page that came back failed: the service and the callback's code (null: one the console does not know). */
export interface ConnectFailure {
  readonly serviceId: string | null;
  readonly code: string | null;
}

/**
 * The third-party accounts the agent's services need, each with its connection status, and Connect
 * for those not connected yet: a full navigation to the broker's third-party authorize route,
 * which comes back to this page (with its request) afterwards, whether it succeeded or failed.
 * A failure is said here, beside the services, in the console's words (the request can still be
 * allowed or denied). MCP servers are not listed here: they have no account to connect.
 */
export function ConnectServices({
  services,
  agentId,
  sessionToken,
  failure = null,
}: {
  services: readonly ConsentService[];
  agentId: string;
  sessionToken: string | null;
  failure?: ConnectFailure | null;
}) {
  const alert = useRef<HTMLDivElement>(null);
  // The person comes back from the provider to the top of a long page: the failure is brought into view.
  useEffect(() => {
    if (failure !== null) alert.current?.scrollIntoView({ block: 'center' });
  }, [failure]);
  if (services.length === 0) return null;
  const missing = services.some((service) => service.connection_status === 'not_connected');
  const failedName =
    failure !== null ? services.find((service) => service.id === failure.serviceId)?.display_name : undefined;
  return (
    <section className="panel consent-connect" aria-labelledby="consent-connect">
      <h2 id="consent-connect">Third-party accounts</h2>
      <p className="consent-muted">
        The agent can use a service only with your account there.
        {missing ? ' Connect now and you come back to this page, or connect later from Connections.' : ''}
      </p>
      {failure !== null ? (
        <div ref={alert} className="notice danger consent-connect-failed" role="alert">
          <strong>{failedName !== undefined ? `Connecting ${failedName} failed.` : 'Connecting failed.'}</strong>{' '}
          {explainCallbackError(failure.code, failedName)}{' '}
          {sessionToken !== null ? 'You can still allow or deny the request below.' : null}
          {failure.code !== null ? <small className="notice-details">Details: {failure.code}</small> : null}
        </div>
      ) : null}
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
