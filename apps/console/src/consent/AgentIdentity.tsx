import type { components } from '../api/user-api';
import { safeUrl } from '../safe-url';

type Agent = components['schemas']['ConsentAgentView'];
type Cimd = components['schemas']['CimdView'];

/** A link to an agent-supplied URL, only when safe; opened without our page as opener or referrer. */
function ExternalLink({ url, children }: { url: string | null; children: string }) {
  const href = safeUrl(url);
  if (href === undefined) return null;
  return (
    <li>
      <a href={href} target="_blank" rel="noopener noreferrer">
        {children}
        <span className="visually-hidden"> (opens in a new tab)</span>
      </a>
    </li>
  );
}

/** Who the agent is: its description and documentation links (its technical identifier is the administrator's business). */
export function AgentAbout({ agent }: { agent: Agent }) {
  const links = [safeUrl(agent.governance_url), safeUrl(agent.user_documentation_url)].filter(
    (url) => url !== undefined,
  );
  return (
    <section className="panel consent-about" aria-labelledby="consent-about">
      <h2 id="consent-about">About this agent</h2>
      {agent.description !== null && agent.description.length > 0 ? (
        <p className="consent-description">{agent.description}</p>
      ) : (
        <p className="consent-muted">The agent gives no description.</p>
      )}
      {links.length > 0 ? (
        <ul className="consent-links" aria-label="Documentation">
          <ExternalLink url={agent.governance_url}>Governance and policies</ExternalLink>
          <ExternalLink url={agent.user_documentation_url}>User documentation</ExternalLink>
        </ul>
      ) : null}
    </section>
  );
}

/** The host a redirect URI returns to (its scheme for a native app's private-use scheme), or the URI itself when it cannot be read. */
function redirectHost(uri: string): string {
  try {
    const target = new URL(uri);
    return target.host.length > 0 ? target.host : target.protocol.replace(/:$/, '');
  } catch {
    return uri;
  }
}

/**
 * For a CIMD client: the domain the broker verified, the client (its document URL) and the
 * host it returns to, shown prominently. Consent is remembered per client
 * document URL and redirect host (README "Security"): `newClient` says the person allowed the
 * agent before, but not this client.
 */
export function CimdIdentity({
  cimd,
  agentName,
  newClient = false,
}: {
  cimd: Cimd;
  agentName?: string;
  newClient?: boolean;
}) {
  const clientIdHref = safeUrl(cimd.client_id_url);
  const host = redirectHost(cimd.redirect_uri);
  return (
    <section className="panel consent-cimd" aria-labelledby="consent-cimd">
      <h2 id="consent-cimd">Verified identity</h2>
      {newClient ? (
        <p className="notice warning consent-cimd-new" role="note">
          You allowed {agentName ?? 'this agent'} before, but not this client. Allow only if you started this from{' '}
          <strong className="mono">{cimd.verified_domain}</strong>: it could then act for you as{' '}
          {agentName ?? 'this agent'} and return to <strong className="mono">{host}</strong>.
        </p>
      ) : null}
      <p className="consent-cimd-lead">This client identified itself with a client metadata document published by</p>
      <p className="consent-cimd-domain">{cimd.verified_domain}</p>
      <dl className="consent-facts">
        <div>
          <dt>Client ID</dt>
          <dd>
            {clientIdHref !== undefined ? (
              <a className="mono" href={clientIdHref} target="_blank" rel="noopener noreferrer">
                {cimd.client_id_url}
              </a>
            ) : (
              <span className="mono">{cimd.client_id_url}</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Returns you to</dt>
          <dd>
            <strong className="mono">{host}</strong> <span className="mono consent-muted">({cimd.redirect_uri})</span>
          </dd>
        </div>
        {cimd.requested_scopes.length > 0 ? (
          <div>
            <dt>Requested scopes</dt>
            <dd>
              <ul className="consent-chips">
                {cimd.requested_scopes.map((scope) => (
                  <li key={scope} className="mono">
                    {scope}
                  </li>
                ))}
              </ul>
            </dd>
          </div>
        ) : null}
      </dl>
    </section>
  );
}
