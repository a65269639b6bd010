import { createBrowserRouter } from 'react-router';
import { Layout } from './components/Layout';
import { NotFound, WithValidId } from './errors/ErrorView';

/**
 * The console's pages, at the paths the broker's history fallback serves (README "Console"). Each page is its own
 * chunk, loaded when the person first opens it: the first page costs the shared code plus that page only (the
 * budget in `test/console/console-budget.e2e-spec.ts`), not every page of the console.
 */
export const router = createBrowserRouter([
  {
    element: <Layout />,
    // Shown only while the first page's chunk loads (a few milliseconds from the broker itself).
    hydrateFallbackElement: (
      <p className="loading" role="status">
        Loading…
      </p>
    ),
    children: [
      { path: '/agents', lazy: async () => ({ Component: (await import('./agents/AgentsPage')).AgentsPage }) },
      {
        path: '/agents/:id',
        lazy: async () => ({ Component: (await import('./consent/AgentConsentPage')).AgentConsentPage }),
      },
      {
        path: '/connections',
        lazy: async () => ({ Component: (await import('./connections/ConnectionsPage')).ConnectionsPage }),
      },
      {
        path: '/approvals',
        lazy: async () => ({ Component: (await import('./approvals/ApprovalsPage')).ApprovalsPage }),
      },
      {
        path: '/approvals/remembered',
        lazy: async () => ({ Component: (await import('./approvals/RememberedPage')).RememberedPage }),
      },
      {
        path: '/approvals/:id',
        lazy: async () => {
          const { ApprovalDetailPage } = await import('./approvals/ApprovalDetailPage');
          return {
            Component: () => (
              <WithValidId what="approval">
                <ApprovalDetailPage />
              </WithValidId>
            ),
          };
        },
      },
      { path: '/activity', lazy: async () => ({ Component: (await import('./activity/ActivityPage')).ActivityPage }) },
      // Only when the broker refused an authorization request without a redirect: the server answers this page then.
      {
        path: '/oauth2/authorize',
        lazy: async () => ({ Component: (await import('./errors/AuthorizeErrorPage')).AuthorizeErrorPage }),
      },
      { path: '*', element: <NotFound /> },
    ],
  },
]);
