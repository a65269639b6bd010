import { Logo } from '../components/AgentLogo';
import { explainCallbackError } from '../connections/callback';
import { StateHeader } from './StateHeader';
import type { AuthorizationRequestView } from './types';

/**
 * Where Connect sends the browser: the broker's third-party authorize route, coming back to this page
 * (`?success=true&service_id=…` or `?error=…`), which reads the request again.
 */
export function connectHere(serviceId: string, requestId: string): string {
  const base = (import.meta.env.VITE_BROKER_URL as string | undefined) ?? '';
  const back = new URL(`/authorization-requests/${encodeURIComponent(requestId)}`, window.location.origin);
  return `${base}/api/third-party/${encodeURIComponent(serviceId)}/oauth2/authorize?redirect_uri=${encodeURIComponent(back.href)}`;
}

/**
 * Allowed, and the person's account at the service is still needed (never connected, expired, or revoked there):
 * "Connect <service>" with why; back from a failed attempt, the callback's code in the console's words (never the
 * address's `error_description`) and "Connect again".
 */
export function ConnectStep({
  view,
  failure,
  allowedHere,
}: {
  view: AuthorizationRequestView;
  failure: { code: string | null } | null;
  allowedHere: boolean;
}) {
  const agent = view.agent.display_name;
  const service = view.service.display_name;
  return (
    <div className="consent-page ar-page">
      <StateHeader party={view.service} title={`Connect ${service}`}>
        {allowedHere ? `You allowed ${agent} to use ${service}. ` : `${agent} may use ${service}. `}
        One step is left before it can.
      </StateHeader>
      {failure !== null ? (
        <div className="notice danger" role="alert">
          <strong>Connecting {service} failed.</strong> {explainCallbackError(failure.code, service)}
          {failure.code !== null ? <small className="notice-details">Details: {failure.code}</small> : null}
        </div>
      ) : null}
      <section className="panel" aria-labelledby="ar-connect">
        <h2 id="ar-connect">Why connect</h2>
        <p>
          {agent} acts in {service} with your own {service} account, and the broker does not have a working connection
          to it{view.needs_connection ? ' (never connected, expired, or ended at ' + service + ')' : ''}. Sign in at{' '}
          {service} once: you come back here, and {agent} can go on.
        </p>
        <div className="consent-service-head ar-service">
          <Logo url={view.service.logo_url} name={service} />
          <span className="consent-service-name">{service}</span>
          <span className="badge warning">Connection needed</span>
        </div>
        <div className="actions consent-error-actions">
          <a className="button primary" href={connectHere(view.service.id, view.id)}>
            {failure !== null ? `Connect ${service} again` : `Connect ${service}`}
          </a>
        </div>
      </section>
    </div>
  );
}
