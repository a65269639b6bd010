import { forwardRef } from 'react';
import { Link } from 'react-router';
import { formatDate } from '../format';
import type { ConsentResource, ConsentService, Grant, PermissionSet } from './types';

/** After Allow without an authorization request: what was granted, until when. */
export const GrantConfirmation = forwardRef<
  HTMLElement,
  {
    grant: Grant;
    agentName: string;
    sets: readonly PermissionSet[];
    services: ReadonlyMap<string, ConsentService>;
    resources: ReadonlyMap<string, ConsentResource>;
  }
>(function GrantConfirmation({ grant, agentName, sets, services, resources }, ref) {
  const names = new Map(sets.map((set) => [set.id, set.name]));
  return (
    <section
      ref={ref}
      tabIndex={-1}
      className="notice success consent-confirmation"
      role="status"
      aria-labelledby="consent-confirmation"
    >
      <h2 id="consent-confirmation">{agentName} may now act for you</h2>
      <p>
        {grant.valid_until === null
          ? 'Access has no expiry: it lasts until you revoke it.'
          : `Access ends ${formatDate(grant.valid_until)}.`}
      </p>
      <ul className="consent-granted">
        {Object.entries(grant.granted_permission_sets).map(([setId, ids]) => (
          <li key={setId}>
            <strong>{names.get(setId) ?? 'Permission set'}</strong>:{' '}
            {ids.map((id) => services.get(id)?.display_name ?? resources.get(id)?.display_name ?? 'unknown').join(', ')}
          </li>
        ))}
      </ul>
      <p>
        <Link to="/agents">Back to your agents</Link>
      </p>
    </section>
  );
});
