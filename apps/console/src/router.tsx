import { createBrowserRouter } from 'react-router';
import { Layout } from './components/Layout';
import { NotFound, WithValidId } from './components/ErrorView';
import { ActivityPage } from './pages/ActivityPage';
import { AgentConsentPage } from './pages/AgentConsentPage';
import { AgentsPage } from './pages/AgentsPage';
import { AuthorizeErrorPage } from './pages/AuthorizeErrorPage';
import { ApprovalDetailPage } from './pages/ApprovalDetailPage';
import { ApprovalsPage } from './pages/ApprovalsPage';
import { ConnectionsPage } from './pages/ConnectionsPage';
import { RememberedPage } from './pages/RememberedPage';

/** The console's pages, at the paths API.md names (the server's history fallback serves exactly these). */
export const router = createBrowserRouter([
  {
    element: <Layout />,
    children: [
      { path: '/agents', element: <AgentsPage /> },
      { path: '/agents/:id', element: <AgentConsentPage /> },
      { path: '/connections', element: <ConnectionsPage /> },
      { path: '/approvals', element: <ApprovalsPage /> },
      { path: '/approvals/remembered', element: <RememberedPage /> },
      {
        path: '/approvals/:id',
        element: (
          <WithValidId what="approval">
            <ApprovalDetailPage />
          </WithValidId>
        ),
      },
      { path: '/activity', element: <ActivityPage /> },
      // Only when the broker refused an authorization request without a redirect: the server answers this page then.
      { path: '/oauth2/authorize', element: <AuthorizeErrorPage /> },
      { path: '*', element: <NotFound /> },
    ],
  },
]);
