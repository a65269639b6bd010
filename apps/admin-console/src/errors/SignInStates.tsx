import { usePageTitle } from '../components/PageTitle';
import { asSentence } from '../components/words';

/** A broker opened on this machine (development: no SSO proxy in front of it). */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * The admin server received no identity from the SSO proxy (401): the console is reached around the proxy, or the
 * proxy does not pass the principal header. Said as such; reloading changes nothing.
 */
export function NoIdentity() {
  usePageTitle('No identity from your sign-in');
  return (
    <section className="panel error-view" role="alert" aria-labelledby="sign-in-heading">
      <h1 id="sign-in-heading">The broker did not receive your identity</h1>
      <p>
        The admin server learns who you are from your organisation&apos;s sign-in proxy, which passes your name with
        every request. This request came without it, so the console cannot show you anything, and reloading the page
        does not help.
      </p>
      {isLoopback(window.location.hostname) ? (
        <div className="dev-hint">
          <p>
            <strong>Running the broker on your own machine?</strong> There is no sign-in proxy in front of it. Send the
            principal header yourself, or put a proxy in front that sets it (docs/admin-console.md, &ldquo;Signing
            in&rdquo;).
          </p>
        </div>
      ) : (
        <p>Open the admin console through your organisation&apos;s sign-in address, or ask who runs the broker.</p>
      )}
    </section>
  );
}

/** The proxy named someone who is not an administrator of this broker (403): the broker's words, and what to do. */
export function NotAdministrator({ message }: { readonly message: string }) {
  usePageTitle('Not an administrator');
  return (
    <section className="panel error-view" role="alert" aria-labelledby="sign-in-heading">
      <h1 id="sign-in-heading">You are not an administrator of this broker</h1>
      <p>{asSentence(message)}</p>
      <p>
        The broker&apos;s configuration lists its administrators and viewers (<code>server.admin.authorization</code>).
        Ask whoever runs the broker to add you if you need access.
      </p>
    </section>
  );
}
