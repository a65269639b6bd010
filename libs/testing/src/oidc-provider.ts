import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Provider from 'oidc-provider';
import type { ClientMetadata, Configuration } from 'oidc-provider';

/** A real OAuth 2.0 / OpenID provider (panva's oidc-provider) on loopback. */
export interface TestOidcProvider {
  readonly issuer: string;
  readonly provider: Provider;
  stop(): Promise<void>;
}

/**
 * Starts oidc-provider on 127.0.0.1 with an ephemeral port. It plays third-party
 * services and upstream authorization servers in the tests.
 */
export async function startOidcProvider(
  options: { clients?: ClientMetadata[]; configuration?: Configuration } = {},
): Promise<TestOidcProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Loaded on first use: only the tests that need a provider pay for it.
  const { default: ProviderClass } = await import('oidc-provider');
  const provider = new ProviderClass(issuer, { clients: options.clients ?? [], ...options.configuration });
  // Composed on the first request, so middleware a test adds with provider.use() takes part.
  let handler: ReturnType<Provider['callback']> | undefined;
  server.on('request', (request, response) => {
    handler ??= provider.callback();
    void handler(request, response);
  });
  return {
    issuer,
    provider,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
