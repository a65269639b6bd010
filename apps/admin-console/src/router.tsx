import type { ComponentType } from 'react';
import { createBrowserRouter, type RouteObject } from 'react-router';
import { Layout } from './components/Layout';
import { NotFound } from './errors/NotFound';
import { followNavigation, loadPage } from './errors/page-loading';
import { RouteError, ShellError } from './errors/RouteError';

/** A route whose page is its own chunk, loaded when the administrator first opens it (through `loadPage`). */
function page(path: string, load: () => Promise<ComponentType>): RouteObject {
  return { path, lazy: async () => ({ Component: await load() }) };
}

/**
 * The admin console's pages, at the paths the admin server's history fallback serves (docs/admin-console.md). Each
 * page is its own chunk: the first page costs the shared code plus that page only (the budget in
 * `test/admin-console/admin-console-budget.e2e-spec.ts`). A page file that does not load goes through `loadPage`, and
 * any page's failure shows `RouteError` inside the console's frame, its navigation still there. `/agents/new` and
 * the other `/new` pages render the same page as `/:id`, without an id.
 */
export const router = createBrowserRouter([
  {
    element: <Layout />,
    errorElement: <ShellError />,
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
          page('/', async () => (await loadPage(() => import('./overview/OverviewPage'))).OverviewPage),
          page('/agents', async () => (await loadPage(() => import('./agents/AgentsPage'))).AgentsPage),
          page('/agents/new', async () => (await loadPage(() => import('./agents/AgentPage'))).AgentPage),
          page('/agents/:id', async () => (await loadPage(() => import('./agents/AgentPage'))).AgentPage),
          page('/services', async () => (await loadPage(() => import('./services/ServicesPage'))).ServicesPage),
          page('/services/new', async () => (await loadPage(() => import('./services/ServicePage'))).ServicePage),
          page('/services/:id', async () => (await loadPage(() => import('./services/ServicePage'))).ServicePage),
          page('/mcp-servers', async () => (await loadPage(() => import('./resources/ResourcesPage'))).ResourcesPage),
          page('/mcp-servers/new', async () => (await loadPage(() => import('./resources/ResourcePage'))).ResourcePage),
          page('/mcp-servers/:id', async () => (await loadPage(() => import('./resources/ResourcePage'))).ResourcePage),
          page(
            '/permission-sets',
            async () => (await loadPage(() => import('./permission-sets/PermissionSetsPage'))).PermissionSetsPage,
          ),
          page(
            '/permission-sets/new',
            async () => (await loadPage(() => import('./permission-sets/PermissionSetPage'))).PermissionSetPage,
          ),
          page(
            '/permission-sets/:id',
            async () => (await loadPage(() => import('./permission-sets/PermissionSetPage'))).PermissionSetPage,
          ),
          page('/activity', async () => (await loadPage(() => import('./activity/ActivityPage'))).ActivityPage),
          page('/signing-keys', async () => (await loadPage(() => import('./keys/SigningKeysPage'))).SigningKeysPage),
          { path: '*', element: <NotFound /> },
        ],
      },
    ],
  },
]);

followNavigation(() => router.state.navigation.location);
