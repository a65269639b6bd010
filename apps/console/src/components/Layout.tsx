import { useState } from 'react';
import { Link, NavLink, Outlet, useLocation } from 'react-router';
import { useMe } from '../api/queries';
import { Brand } from './Brand';
import { FocusContext } from './focus';
import { hueOf, initialOf } from './hue';
import { safeUrl } from '../safe-url';
import { PendingRequestBanner } from '../consent/PendingRequestBanner';

function Person() {
  const me = useMe();
  if (me.data === undefined) return null;
  const { display_name, principal, picture_url } = me.data.data;
  const picture = safeUrl(picture_url);
  return (
    <div className="person" title={principal}>
      {picture !== undefined ? (
        <img className="avatar" src={picture} alt="" width={28} height={28} referrerPolicy="no-referrer" />
      ) : (
        <span className={`avatar initials hue-${hueOf(principal)}`} aria-hidden="true">
          {initialOf(display_name)}
        </span>
      )}
      <span className="person-name">{display_name}</span>
    </div>
  );
}

/** Approvals is the current tab on its list and on each approval, not on Remembered (its own tab). */
function isApprovals(pathname: string): boolean {
  return pathname === '/approvals' || (pathname.startsWith('/approvals/') && pathname !== '/approvals/remembered');
}

export function Layout() {
  const { pathname } = useLocation();
  // A page asking for the person's whole attention (consent to a request, a refused request) has no navigation around it.
  const [focused, setFocused] = useState(false);
  const bare = focused || pathname === '/oauth2/authorize';
  const approvals = isApprovals(pathname);
  return (
    <div className="shell">
      <header className="topbar">
        <Brand />
        {bare ? null : (
          <nav aria-label="Console">
            <NavLink to="/agents">Agents</NavLink>
            <NavLink to="/connections">Connections</NavLink>
            <Link
              to="/approvals"
              className={approvals ? 'active' : undefined}
              aria-current={approvals ? 'page' : undefined}
            >
              Approvals
            </Link>
            <NavLink to="/approvals/remembered">Remembered</NavLink>
            <NavLink to="/activity">Activity</NavLink>
          </nav>
        )}
        <Person />
      </header>
      <main className="content">
        <PendingRequestBanner />
        <FocusContext.Provider value={setFocused}>
          <Outlet />
        </FocusContext.Provider>
      </main>
    </div>
  );
}
