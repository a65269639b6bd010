/** How strongly a permission set (or a service within it) is required (docs/admin-api.md). */
export const REQUIREMENT_TYPES = ['mandatory', 'optional', 'require_all_scopes'] as const;
export type RequirementType = (typeof REQUIREMENT_TYPES)[number];

/** How the broker authenticates to a third party's token endpoint (RFC 7591 §2). */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

/** Algorithms of the broker's own signing keys. */
export const SIGNING_ALGORITHMS = ['ES256', 'RS256', 'EdDSA'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

export interface AgentPermissionSetRef {
  readonly permissionSetId: string;
  readonly requirementType: RequirementType;
}

/** A registered agent (docs/admin-api.md). */
export interface Agent {
  readonly id: string;
  readonly displayName: string;
  readonly description: string | null;
  readonly canonicalId: string | null;
  /** The agent's client id at the upstream authorization server (proxy mode). */
  readonly clientId: string | null;
  readonly logoUrl: string | null;
  readonly governanceUrl: string | null;
  readonly userDocumentationUrl: string | null;
  readonly agentInterfaceUrl: string | null;
  readonly redirectUris: readonly string[];
  readonly allowedScopes: readonly string[];
  /**
   * RFC 8707 resources the agent may ask tokens for, within the server's own policy: exact URIs
   * or prefixes ending in `/` (`isResourceIndicatorEntry`). Empty: no per-agent restriction.
   */
  readonly allowedResources: readonly string[];
  readonly clientUris: readonly string[];
  /**
   * RFC 9449 §5.2 `dpop_bound_access_tokens`: true, every token request must carry a DPoP
   * proof; false, a proof is optional; null, the server default
   * (`oauth2_authorization_server.local.dpop.required`, docs/configuration.md).
   */
  readonly dpopBoundAccessTokens: boolean | null;
  readonly permissionSets: readonly AgentPermissionSetRef[];
  /**
   * Set while an administrator has suspended the agent: every token, exchange and approval of
   * it is refused until it is resumed (docs/admin-api.md "Suspending an agent"); null otherwise.
   */
  readonly suspension: AgentSuspension | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Who suspended an agent, when and why (docs/admin-api.md "Suspending an agent"). */
export interface AgentSuspension {
  readonly suspendedAt: Date;
  /** The administrator's principal. */
  readonly suspendedBy: string;
  readonly reason: string | null;
}

export interface ServiceScope {
  readonly scope: string;
  readonly description: string;
}

/** A third-party OAuth2 service. The client secret is never part of it, only whether one is stored. */
export interface Service {
  readonly id: string;
  readonly displayName: string;
  readonly description: string | null;
  readonly logoUrl: string | null;
  readonly clientId: string;
  readonly hasClientSecret: boolean;
  readonly tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  readonly issuerUri: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly scopes: readonly ServiceScope[];
  readonly protectedResources: readonly string[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface PermissionSetServiceScopes {
  readonly serviceId: string;
  readonly scopes: readonly string[];
  readonly requirementType: RequirementType;
}

/**
 * A protected resource the broker is the authorization server of (an MCP server, an API):
 * tokens for it carry its `resourceUri` as `aud` (RFC 8707, RFC 9728 `resource`) and only
 * the scopes it offers. The broker holds no tokens for it (unlike a `Service`).
 */
export interface ProtectedResource {
  readonly id: string;
  readonly displayName: string;
  readonly description: string | null;
  readonly logoUrl: string | null;
  /** Absolute URI without fragment, compared exactly as clients send it in `resource`. */
  readonly resourceUri: string;
  /** The scopes it offers, each described for people. */
  readonly scopes: readonly ServiceScope[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface PermissionSetResourceScopes {
  readonly resourceId: string;
  readonly scopes: readonly string[];
  readonly requirementType: RequirementType;
}

/** A bundle of service scopes and protected-resource scopes. */
export interface PermissionSet {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly serviceScopes: readonly PermissionSetServiceScopes[];
  readonly resourceScopes: readonly PermissionSetResourceScopes[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One delegated service of a grant, under one permission set, with the consented scopes. */
export interface GrantDelegation {
  readonly permissionSetId: string;
  readonly serviceId: string;
  readonly scopes: readonly string[];
}

/** One delegated protected resource of a grant, under one permission set, with the consented scopes. */
export interface GrantResourceDelegation {
  readonly permissionSetId: string;
  readonly resourceId: string;
  readonly scopes: readonly string[];
}

/** A user's delegation to an agent (docs/consent-and-connections.md): one per principal and agent. */
export interface Grant {
  readonly id: string;
  readonly principal: string;
  readonly agentId: string;
  /** null: indefinite. */
  readonly validUntil: Date | null;
  readonly delegations: readonly GrantDelegation[];
  /** The protected resources (MCP servers) the grant lets the agent ask tokens for. */
  readonly resourceDelegations: readonly GrantResourceDelegation[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A protected resource a grant delegates, as lists name it. */
export interface DelegatedResource {
  readonly id: string;
  readonly displayName: string;
  readonly resourceUri: string;
  readonly logoUrl: string | null;
}

/** An agent the principal has an active grant for (docs/consent-and-connections.md). */
export interface DelegationSummary {
  readonly agentId: string;
  readonly displayName: string;
  readonly logoUrl: string | null;
  /** Distinct services the active grant delegates. */
  readonly activeGrantCount: number;
  /** The protected resources (MCP servers) the active grant delegates, by display name. */
  readonly resources: readonly DelegatedResource[];
  readonly lastModifiedAt: Date;
  readonly expiresAt: Date | null;
}
