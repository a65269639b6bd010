import { isLoopback } from '../components/sign-in';

/**
 * A request that reached the broker without the person's identity: no header from the sign-in proxy, no session
 * cookie, no development principal. Said as such (not "expired": there was no sign-in), and on a broker opened on this
 * machine, how to name a development principal (README "Looking around without an SSO proxy").
 */
export function NoIdentity({ headingLevel = 2 }: { headingLevel?: 1 | 2 }) {
  const Heading = headingLevel === 1 ? 'h1' : 'h2';
  return (
    <section className="panel error-view" role="alert">
      <Heading>The broker did not receive your identity</Heading>
      <p>
        The broker learns who you are from your organisation&apos;s sign-in, which passes your name along with every
        request. This request came without it, so reloading the page does not help.
      </p>
      {isLoopback(window.location.hostname) ? (
        <div className="dev-hint">
          <p>
            <strong>Running the broker on your own machine?</strong> There is no sign-in in front of it. Name a
            development principal (<code>development.principal</code>) and restart:
          </p>
          <pre className="json">
            {"echo 'development: {principal: alice@example.com}' > dev.yaml\nnpm start -- --config dev.yaml"}
          </pre>
          <p className="muted">The README explains it under &ldquo;Looking around without an SSO proxy&rdquo;.</p>
        </div>
      ) : (
        <p>
          Open the console through your organisation&apos;s sign-in address, or ask your administrator how to reach it.
        </p>
      )}
    </section>
  );
}
