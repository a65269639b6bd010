import { createBrowserRouter } from 'react-router';
import { Layout } from './components/Layout';
import { NotFound, WithValidId } from './errors/ErrorView';
import { followNavigation, loadPage } from './errors/page-loading';
import { RouteError, ShellError } from './errors/RouteError';

/**
 * The console's pages, at the paths the broker's history fallback serves (README "Console"). Each page is its own
 * chunk, loaded when the person first opens it: the first page costs the shared code plus that page only (the
 * budget in `test/console/console-budget.e2e-spec.ts`), not every page of the console. A page file that does not
 * load (the broker not answering, or replaced by an upgrade while the tab was open) goes through `loadPage`, and any
 * page's failure shows `RouteError` inside the console's frame, its navigation still there.
 */
export const router = createBrowserRouter([
  {
    element: <Layout />,
    errorElement: <ShellError />,
    // Shown only while the first page's chunk loads (a few milliseconds from the broker itself).
    hydrateFallbackElement: (
      <p className="loading" role="status">
        Loading…
      </p>
    ),
    children: [
      {
        // Pathless: the pages' error boundary sits inside the layout, so the header and navigation stay.
        errorElement: <RouteError />,
        children: [
          {
            path: '/agents',
            lazy: async () => ({ Component: (await loadPage(() => import('./agents/AgentsPage'))).AgentsPage }),
          },
          {
            path: '/agents/:id',
            lazy: async () => ({
              Component: (await loadPage(() => import('./consent/AgentConsentPage'))).AgentConsentPage,
            }),
          },
          {
            path: '/connections',
            lazy: async () => ({
              Component: (await loadPage(() => import('./connections/ConnectionsPage'))).ConnectionsPage,
            }),
          },
          {
            path: '/approvals',
            lazy: async () => ({
              Component: (await loadPage(() => import('./approvals/ApprovalsPage'))).ApprovalsPage,
            }),
          },
          {
            path: '/approvals/remembered',
            lazy: async () => ({
              Component: (await loadPage(() => import('./approvals/RememberedPage'))).RememberedPage,
            }),
          },
          {
            path: '/approvals/:id',
            lazy: async () => {
              const { ApprovalDetailPage } = await loadPage(() => import('./approvals/ApprovalDetailPage'));
              return {
                Component: () => (
                  <WithValidId what="approval">
                    <ApprovalDetailPage />
                  </WithValidId>
                ),
              };
            },
          },
          {
            path: '/activity',
            lazy: async () => ({ Component: (await loadPage(() => import('./activity/ActivityPage'))).ActivityPage }),
          },
          {
            path: '/authorization-requests/:id',
            lazy: async () => ({
              Component: (await loadPage(() => import('./authorization-requests/AuthorizationRequestPage')))
                .AuthorizationRequestPage,
            }),
          },
          // Only when the broker refused an authorization request without a redirect: the server answers this page then.
          {
            path: '/oauth2/authorize',
            lazy: async () => ({
              Component: (await loadPage(() => import('./errors/AuthorizeErrorPage'))).AuthorizeErrorPage,
            }),
          },
          { path: '*', element: <NotFound /> },
        ],
      },
    ],
  },
]);

followNavigation(() => router.state.navigation.location);
