import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type ClientMetadata, type Configuration } from 'oidc-provider';

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
export async function startOidcProvider(options: { clients?: ClientMetadata[]; configuration?: Configuration } = {}): Promise<TestOidcProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, { clients: options.clients ?? [], ...options.configuration });
  server.on('request', provider.callback());
  return {
    issuer,
    provider,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
