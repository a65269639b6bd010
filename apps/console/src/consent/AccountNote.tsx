import { useId, useState } from 'react';
import { useMe } from '../api/queries';

/**
 * Whose decision this is: the account the broker received from the sign-in, with "Not you?". Behind an SSO proxy
 * the console cannot sign anyone out or switch accounts (the proxy owns the sign-in), so "Not you?" explains how to
 * do it there (README "Console").
 */
export function AccountNote() {
  const me = useMe();
  const [open, setOpen] = useState(false);
  const help = useId();
  if (me.data === undefined) return null;
  const { display_name, principal } = me.data.data;
  return (
    <p className="consent-account">
      <span>
        Deciding as <strong>{display_name}</strong>
        {display_name !== principal ? <span className="mono"> ({principal})</span> : null}.
      </span>
      <button
        type="button"
        className="link-button"
        aria-expanded={open}
        aria-controls={help}
        onClick={() => setOpen(!open)}
      >
        Not you?
      </button>
      <span id={help} className="consent-account-help" hidden={!open}>
        Your organisation&apos;s sign-in told the broker who you are. To decide as someone else, sign out of your
        organisation&apos;s sign-in (or open the link in a private window), sign in as that person, and start again from
        the application. Nothing is shared until you press Allow.
      </span>
    </p>
  );
}
