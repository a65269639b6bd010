import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { assertNever } from '@broker/domain';
import type { Provider } from '@nestjs/common';
import { AUTHORIZE_STRATEGY, type AuthorizeStrategy } from './authorize/authorize-strategy';
import { LocalAuthorize } from './authorize/local-authorize';
import { JWKS_SOURCE, type JwksSource } from './metadata/jwks-source';
import { HybridAuthorizationCodeGrant, HybridAuthorize, HybridJwks } from './proxy/hybrid';
import { ProxyAuthorize } from './proxy/proxy-authorize';
import { ProxyTokenForwarder } from './proxy/proxy-token-forwarder';
import { UpstreamKeySet } from './proxy/upstream-key-set';
import { SigningKeyService } from './signing-keys/signing-key.service';
import { AuthorizationCodeGrant } from './token/authorization-code.grant';
import { ClientCredentialsGrant } from './token/client-credentials.grant';
import { RefreshTokenGrant } from './token/refresh-token.grant';
import { GRANT_STRATEGIES, type GrantStrategy } from './token/grant-strategy';
import { TokenExchangeGrant } from './token-exchange/token-exchange.grant';
import { TrustAnchor } from './token-exchange/trust-anchor';
import { GatewayCredentials } from './token-exchange/gateway-credentials';
import { ImpersonationExchange } from './impersonation/impersonation.exchange';
import { TOKEN_LIFECYCLE_SCOPE, type TokenLifecycleScope } from './token-lifecycle/lifecycle-clients';
import { EnterpriseIssuers } from './enterprise/enterprise-issuers';
import { IdJagGrant } from './enterprise/id-jag.grant';
import { CibaGrant } from './ciba/ciba.grant';
import { CibaClients } from './ciba/ciba-clients';

/** Every strategy implementation; the factories below pick the mode's. */
export const STRATEGY_IMPLEMENTATIONS = [
  LocalAuthorize,
  ProxyAuthorize,
  AuthorizationCodeGrant,
  RefreshTokenGrant,
  ClientCredentialsGrant,
  ProxyTokenForwarder,
  UpstreamKeySet,
  TrustAnchor,
  GatewayCredentials,
  ImpersonationExchange,
  TokenExchangeGrant,
  EnterpriseIssuers,
  IdJagGrant,
  CibaClients,
  CibaGrant,
];

/**
 * The mode is chosen once, here: `AuthorizeStrategy`, the token
 * endpoint's grant strategies and the `JwksSource` are bound for `local`, `proxy` or
 * `hybrid` (local + proxy, dispatched per agent). No handler checks the mode.
 */
export const MODE_STRATEGY_PROVIDERS: Provider[] = [
  {
    provide: AUTHORIZE_STRATEGY,
    inject: [BROKER_CONFIG, LocalAuthorize, ProxyAuthorize],
    useFactory: (config: BrokerConfig, local: LocalAuthorize, proxy: ProxyAuthorize): AuthorizeStrategy => {
      const mode = config.oauth2_authorization_server.mode;
      switch (mode) {
        case 'local':
          return local;
        case 'proxy':
          return proxy;
        case 'hybrid':
          return new HybridAuthorize(local, proxy);
        default:
          return assertNever(mode, 'mode');
      }
    },
  },
  {
    provide: GRANT_STRATEGIES,
    inject: [
      BROKER_CONFIG,
      AuthorizationCodeGrant,
      RefreshTokenGrant,
      ClientCredentialsGrant,
      ProxyTokenForwarder,
      TokenExchangeGrant,
      LocalAuthorize,
      EnterpriseIssuers,
      IdJagGrant,
      CibaGrant,
    ],
    useFactory: (
      config: BrokerConfig,
      code: AuthorizationCodeGrant,
      refresh: RefreshTokenGrant,
      credentials: ClientCredentialsGrant,
      forwarder: ProxyTokenForwarder,
      exchange: TokenExchangeGrant,
      local: LocalAuthorize,
      enterprise: EnterpriseIssuers,
      idJag: IdJagGrant,
      ciba: CibaGrant,
    ): GrantStrategy[] => {
      // The third-party token exchange works the same in every mode; identity assertions of
      // enterprise IdPs are offered only when one is trusted (local and hybrid modes), the CIBA
      // poll only when enabled (local and hybrid: configuration refuses it in proxy mode).
      const assertions = enterprise.enabled ? [idJag] : [];
      const backchannel = ciba.enabled ? [ciba] : [];
      const mode = config.oauth2_authorization_server.mode;
      switch (mode) {
        case 'local':
          return [code, refresh, credentials, exchange, ...assertions, ...backchannel];
        case 'proxy':
          return [forwarder, exchange];
        case 'hybrid':
          // Refresh tokens are the broker's own (local agents'); a proxied agent's come from the upstream.
          return [
            new HybridAuthorizationCodeGrant(code, forwarder, (clientId) => local.servesLocally(clientId)),
            refresh,
            credentials,
            exchange,
            ...assertions,
            ...backchannel,
          ];
        default:
          return assertNever(mode, 'mode');
      }
    },
  },
  {
    // Revocation and introspection (RFC 7009, RFC 7662) serve the tokens the broker issues itself.
    provide: TOKEN_LIFECYCLE_SCOPE,
    inject: [BROKER_CONFIG],
    useFactory: (config: BrokerConfig): TokenLifecycleScope => {
      const mode = config.oauth2_authorization_server.mode;
      switch (mode) {
        case 'local':
          return { open: true, servesAgent: () => true };
        case 'proxy':
          return { open: false, servesAgent: () => false };
        case 'hybrid':
          return { open: true, servesAgent: (agent) => agent.clientId === null };
        default:
          return assertNever(mode, 'mode');
      }
    },
  },
  {
    provide: JWKS_SOURCE,
    inject: [BROKER_CONFIG, SigningKeyService, UpstreamKeySet],
    useFactory: (config: BrokerConfig, keys: SigningKeyService, upstream: UpstreamKeySet): JwksSource => {
      const local: JwksSource = { keySet: () => keys.jwks() };
      const proxied: JwksSource = { keySet: () => upstream.keySet() };
      const mode = config.oauth2_authorization_server.mode;
      switch (mode) {
        case 'local':
          return local;
        case 'proxy':
          return proxied;
        case 'hybrid':
          return new HybridJwks(local, proxied);
        default:
          return assertNever(mode, 'mode');
      }
    },
  },
];
