import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { OAuthError } from '@broker/domain';
import { Logger, type Provider } from '@nestjs/common';
import { AUTHORIZE_STRATEGY, type AuthorizeStrategy } from './authorize/authorize-strategy';
import { LocalAuthorize } from './authorize/local-authorize';
import { JWKS_SOURCE, type JwksSource } from './metadata/jwks-source';
import { SigningKeyService } from './signing-keys/signing-key.service';
import { AuthorizationCodeGrant } from './token/authorization-code.grant';
import { ClientCredentialsGrant } from './token/client-credentials.grant';
import { GRANT_STRATEGIES, type GrantStrategy } from './token/grant-strategy';

type Mode = BrokerConfig['oauth2_authorization_server']['mode'];

/**
 * Proxy and hybrid modes are not built yet (their upstream forwarding, key republishing
 * and per-agent dispatch arrive with the rest of the OAuth2-server issue). Until then they
 * answer with an explicit error instead of silently behaving like local mode.
 */
const notAvailable = (mode: Mode): OAuthError => new OAuthError('temporarily_unavailable', `oauth2_authorization_server.mode ${mode} is not available in this version`);

/**
 * The mode is chosen once, here (STYLE.md rule 5): `AuthorizeStrategy`, the grant
 * strategies of the token endpoint and the `JwksSource` are bound for the configured mode.
 */
export const MODE_STRATEGY_PROVIDERS: Provider[] = [
  {
    provide: AUTHORIZE_STRATEGY,
    inject: [BROKER_CONFIG, LocalAuthorize],
    useFactory: (config: BrokerConfig, local: LocalAuthorize): AuthorizeStrategy => {
      const mode = config.oauth2_authorization_server.mode;
      if (mode === 'local') return local;
      new Logger('OAuthServer').warn(`oauth2_authorization_server.mode ${mode}: /oauth2/authorize, /oauth2/token and the JWKS are not available in this version`);
      return { authorize: () => Promise.reject(notAvailable(mode)) };
    },
  },
  {
    provide: GRANT_STRATEGIES,
    inject: [BROKER_CONFIG, AuthorizationCodeGrant, ClientCredentialsGrant],
    useFactory: (config: BrokerConfig, code: AuthorizationCodeGrant, credentials: ClientCredentialsGrant): GrantStrategy[] => {
      const mode = config.oauth2_authorization_server.mode;
      if (mode === 'local') return [code, credentials];
      return ['authorization_code', 'client_credentials'].map((grantType) => ({ grantType, handle: () => Promise.reject(notAvailable(mode)) }));
    },
  },
  {
    provide: JWKS_SOURCE,
    inject: [BROKER_CONFIG, SigningKeyService],
    useFactory: (config: BrokerConfig, keys: SigningKeyService): JwksSource => {
      const mode = config.oauth2_authorization_server.mode;
      if (mode === 'local') return { keySet: () => keys.jwks() };
      return { keySet: () => Promise.reject(notAvailable(mode)) };
    },
  },
];
