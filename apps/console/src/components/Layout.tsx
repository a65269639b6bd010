import { useQuery } from '@tanstack/react-query';
import { NavLink, Outlet } from 'react-router';
import { api, unwrap } from '../api/client';
import { safeUrl } from '../safe-url';
import { PendingRequestBanner } from '../consent/PendingRequestBanner';

/** The person (from /api/me): name and picture in the header. */
export function useMe() {
  return useQuery({ queryKey: ['me'], queryFn: () => unwrap(api.GET('/api/me')) });
}

function Person() {
  const me = useMe();
  if (me.data === undefined) return null;
  const { display_name, principal, picture_url } = me.data.data;
  const picture = safeUrl(picture_url);
  return (
    <div className="person" title={principal}>
      {picture !== undefined ? <img className="avatar" src={picture} alt="" width={28} height={28} referrerPolicy="no-referrer" /> : <span className="avatar initials" aria-hidden="true">{display_name.slice(0, 1).toUpperCase()}</span>}
      <span className="person-name">{display_name}</span>
    </div>
  );
}

export function Layout() {
  return (
    <div className="shell">
      <header className="topbar">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" />
          <span>Identity Broker</span>
        </div>
        <nav aria-label="Console">
          <NavLink to="/agents">Agents</NavLink>
          <NavLink to="/connections">Connections</NavLink>
          <NavLink to="/approvals" end>
            Approvals
          </NavLink>
          <NavLink to="/approvals/remembered">Remembered</NavLink>
          <NavLink to="/activity">Activity</NavLink>
        </nav>
        <Person />
      </header>
      <main className="content">
        <PendingRequestBanner />
        <Outlet />
      </main>
    </div>
  );
}
