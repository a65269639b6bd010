import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { ASYMMETRIC_ALGORITHMS } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { ID_JAG_GRANT_PROFILE, JWT_BEARER_GRANT } from '../enterprise/id-jag.grant';
import { TOKEN_EXCHANGE } from '../token-exchange/token-types';
import { CIBA_GRANT } from '../ciba/ciba.grant';
import { TOOL_CALL_TYPE } from '../ciba/tool-call-details';
import { TokenEndpoint } from '../token/token-endpoint';

/** Client authentication with a shared secret, as every agent with broker-issued credentials uses it (RFC 6749 §2.3.1). */
const SECRET_METHODS = ['client_secret_basic', 'client_secret_post'] as const;

/** RFC 8414 authorization server metadata. */
export interface AuthorizationServerMetadata {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly jwks_uri: string;
  readonly response_types_supported: readonly string[];
  readonly grant_types_supported: readonly string[];
  readonly code_challenge_methods_supported: readonly string[];
  readonly token_endpoint_auth_methods_supported: readonly string[];
  /**
   * RFC 8414 §2: present because `private_key_jwt` is listed (the gateway's client assertion, RFC 7523):
   * the asymmetric algorithms its verifier accepts, never `none` or HMAC.
   */
  readonly token_endpoint_auth_signing_alg_values_supported?: readonly string[];
  readonly authorization_response_iss_parameter_supported: boolean;
  /** Client ID Metadata Documents (local and hybrid modes with `cimd.enabled`); absent otherwise. */
  readonly client_id_metadata_document_supported?: true;
  /** RFC 9449 §5.1: the algorithms of DPoP proofs the token endpoint accepts (local and hybrid modes, DPoP on). */
  readonly dpop_signing_alg_values_supported?: readonly string[];
  /** `offline_access` (refresh tokens), local and hybrid modes with `refresh_tokens.enabled`. */
  readonly scopes_supported?: readonly string[];
  /** RFC 7009 (local and hybrid modes). */
  readonly revocation_endpoint?: string;
  readonly revocation_endpoint_auth_methods_supported?: readonly string[];
  /** RFC 7662 (local and hybrid modes). */
  readonly introspection_endpoint?: string;
  readonly introspection_endpoint_auth_methods_supported?: readonly string[];
  /** RFC 8414 §2: present with `private_key_jwt` among the introspection methods, as for the token endpoint. */
  readonly introspection_endpoint_auth_signing_alg_values_supported?: readonly string[];
  /**
   * draft-ietf-oauth-identity-assertion-authz-grant §7.2: the identity assertion profile of the JWT bearer grant, when
   * an enterprise IdP is trusted (never which: §8.4).
   */
  readonly authorization_grant_profiles_supported?: readonly string[];
  /** OpenID CIBA Core 1.0 §4 (local and hybrid modes with `ciba.enabled`): poll mode only, no user code. */
  readonly backchannel_authentication_endpoint?: string;
  readonly backchannel_token_delivery_modes_supported?: readonly string[];
  readonly backchannel_user_code_parameter_supported?: false;
  /** RFC 9396 §10: the one `authorization_details` type, the tool call (with CIBA). */
  readonly authorization_details_types_supported?: readonly string[];
}

/**
 * `GET /.well-known/oauth-authorization-server`: the issuer is the broker's public URL in every mode.
 * Wherever a JWT client authentication method is listed, its signing algorithms are listed too
 * (RFC 8414 §2: that entry MUST then be present); the algorithms are `ASYMMETRIC_ALGORITHMS`,
 * the allow-list of the gateway's trust anchor (impersonation rules accept subsets of it).
 */
@Injectable()
export class AuthorizationServerMetadataService {
  private readonly metadata: AuthorizationServerMetadata;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig, tokens: TokenEndpoint) {
    const base = config.server.enduser.public_url;
    this.metadata = {
      issuer: config.oauth2_authorization_server.local.issuer_uri ?? base,
      authorization_endpoint: `${base}/oauth2/authorize`,
      token_endpoint: `${base}/oauth2/token`,
      jwks_uri: `${base}/oauth2/jwks.json`,
      response_types_supported: ['code'],
      grant_types_supported: tokens.grantTypes,
      ...(tokens.grantTypes.includes(JWT_BEARER_GRANT)
        ? { authorization_grant_profiles_supported: [ID_JAG_GRANT_PROFILE] }
        : {}),
      code_challenge_methods_supported: ['S256'],
      // RFC 8693 token exchange (every mode): the gateway authenticates by its client assertion (RFC 7523 §2.2).
      ...(tokens.grantTypes.includes(TOKEN_EXCHANGE)
        ? {
            token_endpoint_auth_methods_supported: [...SECRET_METHODS, 'none', 'private_key_jwt'],
            token_endpoint_auth_signing_alg_values_supported: [...ASYMMETRIC_ALGORITHMS],
          }
        : { token_endpoint_auth_methods_supported: [...SECRET_METHODS, 'none'] }),
      authorization_response_iss_parameter_supported: true,
      ...(tokens.grantTypes.includes(CIBA_GRANT)
        ? {
            backchannel_authentication_endpoint: `${base}/oauth2/bc-authorize`,
            backchannel_token_delivery_modes_supported: ['poll'],
            backchannel_user_code_parameter_supported: false as const,
            authorization_details_types_supported: [TOOL_CALL_TYPE],
          }
        : {}),
      // MCP clients (MCP authorization 2025-11-25) look for this before using a document URL as client_id.
      ...(config.oauth2_authorization_server.cimd.enabled && config.oauth2_authorization_server.mode !== 'proxy'
        ? { client_id_metadata_document_supported: true as const }
        : {}),
      ...(config.oauth2_authorization_server.local.dpop.enabled && config.oauth2_authorization_server.mode !== 'proxy'
        ? { dpop_signing_alg_values_supported: [...config.oauth2_authorization_server.local.dpop.signing_algorithms] }
        : {}),
      ...(config.oauth2_authorization_server.local.refresh_tokens.enabled &&
      config.oauth2_authorization_server.mode !== 'proxy'
        ? { scopes_supported: ['offline_access'] }
        : {}),
      // Proxy mode relays the upstream's tokens: it revokes and introspects nothing of its own.
      ...(config.oauth2_authorization_server.mode === 'proxy'
        ? {}
        : {
            revocation_endpoint: `${base}/oauth2/revoke`,
            revocation_endpoint_auth_methods_supported: [...SECRET_METHODS, 'none'],
            introspection_endpoint: `${base}/oauth2/introspect`,
            // RFC 7662 §2.1: introspection needs an authenticated caller: a confidential agent, or the gateway's client assertion (RFC 7523).
            introspection_endpoint_auth_methods_supported: [...SECRET_METHODS, 'private_key_jwt'],
            introspection_endpoint_auth_signing_alg_values_supported: [...ASYMMETRIC_ALGORITHMS],
          }),
    };
  }

  get(): AuthorizationServerMetadata {
    return this.metadata;
  }
}
