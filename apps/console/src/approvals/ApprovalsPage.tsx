import { Link } from 'react-router';
import { usePendingApprovals } from '../api/queries';
import { directRequest, requestContext, reviewOrder, toolTitle } from './request-context';
import { ArgumentsView, RiskBadge, agentName, type Approval } from './values';
import { usePageTitle } from '../components/page-title';
import { formatDate } from '../format';
import { PageRead } from '../components/PageRead';

/** `/approvals`: the person's pending tool approvals, newest first, refreshing by itself. */
export function ApprovalsPage() {
  usePageTitle('Approvals');
  const pending = usePendingApprovals();
  return (
    <>
      <div className="page-header">
        <div>
          <h1>Approvals</h1>
          <p>Tool calls your agents want to make and are waiting for your decision.</p>
        </div>
        <Link className="button" to="/approvals/remembered">
          Remembered decisions
        </Link>
      </div>
      {/* The broker stopped answering the polls: the list stays, with a banner. */}
      <PageRead query={pending} loading="Loading pending approvals…">
        {/* Critical first, then newest first. */}
        {(data) => <PendingList items={reviewOrder(data.data)} />}
      </PageRead>
    </>
  );
}

function PendingList({ items }: { items: readonly Approval[] }) {
  return (
    <>
      <p className="sr-only" role="status">
        {items.length === 0
          ? 'No pending approvals.'
          : `${items.length} pending approval${items.length === 1 ? '' : 's'}.`}
      </p>
      {items.length === 0 ? (
        <div className="panel empty">
          <p>Nothing is waiting for you.</p>
          <p>When an agent asks to run a tool that needs your approval, it appears here.</p>
        </div>
      ) : (
        <ul className="list" aria-label="Pending approvals">
          {items.map((item) => {
            const direct = directRequest(item);
            const context = requestContext(item.metadata);
            const title = toolTitle(item);
            const named = title !== item.tool_name;
            return (
              <li key={item.id} className="card approval-card">
                <div className="card-body">
                  <div className="approval-heading">
                    <span className="card-title">
                      <Link to={`/approvals/${item.id}`} className={named ? undefined : 'mono'}>
                        {title}
                      </Link>
                    </span>
                    <RiskBadge level={item.risk_level} />
                    {direct !== null ? <span className="badge requested">Asked by the agent directly</span> : null}
                  </div>
                  {direct === null && context.reason !== null ? (
                    <p className="approval-reason">“{context.reason}”</p>
                  ) : null}
                  {direct?.bindingMessage != null ? (
                    <p className="approval-reason">
                      Words to check: <strong>{direct.bindingMessage}</strong>
                    </p>
                  ) : null}
                  <div className="meta">
                    <span>Agent: {agentName(item)}</span>
                    {direct?.serverUri != null ? (
                      <span>MCP server: {direct.serverName ?? direct.serverUri}</span>
                    ) : null}
                    <span>Asked {formatDate(item.created_at)}</span>
                    {item.expires_at !== null ? <span>Expires {formatDate(item.expires_at)}</span> : null}
                  </div>
                  <ArgumentsView args={item.arguments} />
                </div>
                <div className="actions">
                  <Link
                    className="button primary"
                    to={`/approvals/${item.id}`}
                    aria-label={`Review ${title} from ${agentName(item)}`}
                  >
                    Review
                  </Link>
                </div>
              </li>
            );
          })}
        </ul>
      )}
    </>
  );
}
