import { Link, useLocation } from 'react-router';
import { requestAddress } from './consent-params';
import { isLive, usePendingRequests } from './pending-request';

/**
 * On every console page but the request's own: the agents waiting for the person's answer in
 * this tab (a consent request left by clicking elsewhere or going back), each with the way back.
 */
export function PendingRequestBanner() {
  const requests = usePendingRequests();
  const { pathname } = useLocation();
  // Expiry is judged at each render (a navigation, a request kept or forgotten): reading the clock here is the point.
  // eslint-disable-next-line react-hooks/purity
  const now = Date.now();
  const waiting = requests.filter((request) => isLive(request, now) && pathname !== `/agents/${request.agentId}`);
  if (waiting.length === 0) return null;
  return (
    <div className="pending-requests" role="region" aria-label="Requests waiting for your answer">
      {waiting.map((request) => (
        <p key={request.agentId} className="notice warning pending-request">
          <span>
            <strong>{request.agentName}</strong> is waiting for your answer.
          </span>
          <Link className="button" to={requestAddress(request.agentId)}>
            Return to the request
          </Link>
        </p>
      ))}
    </div>
  );
}
