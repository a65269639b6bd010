import { NavLink, Outlet } from 'react-router';
import { ApiFailure } from '../api/client';
import { useMe } from '../api/queries';
import { NoIdentity, NotAdministrator } from '../errors/SignInStates';
import { Brand } from './Brand';

const PAGES: readonly { to: string; label: string }[] = [
  { to: '/', label: 'Overview' },
  { to: '/agents', label: 'Agents' },
  { to: '/services', label: 'Services' },
  { to: '/mcp-servers', label: 'MCP servers' },
  { to: '/permission-sets', label: 'Permission sets' },
  { to: '/activity', label: 'Activity' },
  { to: '/signing-keys', label: 'Signing keys' },
];

/** The signed-in administrator in the header: the principal the SSO proxy named, and the role. */
function Principal() {
  const me = useMe();
  if (me.data === undefined) return null;
  const { principal, role } = me.data;
  return (
    <div className="principal">
      <span className="principal-name" title={principal}>
        {principal}
      </span>
      <span className={role === 'viewer' ? 'badge warning' : 'badge'}>
        {role === 'viewer' ? 'Viewer (read-only)' : 'Administrator'}
      </span>
    </div>
  );
}

/**
 * What the frame shows instead of the page when the proxy's identity does not make an administrator: none at all
 * (401), or someone who is not one of this broker's administrators (403). Null when the page can be shown.
 */
function signInState(error: unknown) {
  if (!(error instanceof ApiFailure)) return null;
  if (error.status === 401) return <NoIdentity />;
  if (error.status === 403) return <NotAdministrator message={error.message} />;
  return null;
}

/**
 * The admin console's frame: a skip link, the header (product, the signed-in principal and role), the navigation of
 * the console's pages and the page in `<main>`. The page waits for `GET /api/me`, so a page never speaks to someone
 * the broker does not take for an administrator.
 */
export function Layout() {
  const me = useMe();
  const refused = me.isError ? signInState(me.error) : null;
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Brand />
        <Principal />
      </header>
      <div className="frame">
        {refused === null ? (
          <nav aria-label="Admin console" className="sidenav">
            {PAGES.map(({ to, label }) => (
              <NavLink key={to} to={to} end={to === '/'}>
                {label}
              </NavLink>
            ))}
          </nav>
        ) : null}
        <main className="content" id="main" tabIndex={-1}>
          {me.isPending ? (
            <p className="loading" role="status">
              Loading…
            </p>
          ) : (
            (refused ?? <Outlet />)
          )}
        </main>
      </div>
    </div>
  );
}
