import { Column, Entity, PrimaryColumn } from 'typeorm';

const timestamptz = { type: 'timestamptz' } as const;

@Entity({ name: 'agents' })
export class AgentEntity {
  @PrimaryColumn({ type: 'uuid' }) id!: string;
  @Column({ name: 'display_name', type: 'varchar', length: 255 }) displayName!: string;
  @Column({ type: 'text', nullable: true }) description!: string | null;
  @Column({ name: 'canonical_id', type: 'varchar', length: 128, nullable: true }) canonicalId!: string | null;
  @Column({ name: 'client_id', type: 'text', nullable: true }) clientId!: string | null;
  @Column({ name: 'logo_url', type: 'text', nullable: true }) logoUrl!: string | null;
  @Column({ name: 'governance_url', type: 'text', nullable: true }) governanceUrl!: string | null;
  @Column({ name: 'user_documentation_url', type: 'text', nullable: true }) userDocumentationUrl!: string | null;
  @Column({ name: 'agent_interface_url', type: 'text', nullable: true }) agentInterfaceUrl!: string | null;
  @Column({ name: 'redirect_uris', type: 'jsonb' }) redirectUris!: string[];
  @Column({ name: 'allowed_scopes', type: 'jsonb' }) allowedScopes!: string[];
  @Column({ name: 'allowed_resources', type: 'jsonb' }) allowedResources!: string[];
  @Column({ name: 'client_uris', type: 'jsonb' }) clientUris!: string[];
  @Column({ name: 'dpop_bound_access_tokens', type: 'boolean', nullable: true }) dpopBoundAccessTokens!: boolean | null;
  /** Set while an administrator has suspended the agent (with `suspendedBy`); null otherwise. */
  @Column({ name: 'suspended_at', ...timestamptz, nullable: true }) suspendedAt!: Date | null;
  @Column({ name: 'suspended_by', type: 'text', nullable: true }) suspendedBy!: string | null;
  @Column({ name: 'suspension_reason', type: 'varchar', length: 500, nullable: true }) suspensionReason!: string | null;
  @Column({ name: 'created_at', ...timestamptz }) createdAt!: Date;
  @Column({ name: 'updated_at', ...timestamptz }) updatedAt!: Date;
}

@Entity({ name: 'agent_permission_sets' })
export class AgentPermissionSetEntity {
  @PrimaryColumn({ name: 'agent_id', type: 'uuid' }) agentId!: string;
  @PrimaryColumn({ name: 'permission_set_id', type: 'uuid' }) permissionSetId!: string;
  @Column({ name: 'requirement_type', type: 'varchar', length: 32 }) requirementType!: string;
  @Column({ type: 'integer' }) position!: number;
}

@Entity({ name: 'services' })
export class ServiceEntity {
  @PrimaryColumn({ type: 'uuid' }) id!: string;
  @Column({ name: 'display_name', type: 'varchar', length: 255 }) displayName!: string;
  @Column({ type: 'text', nullable: true }) description!: string | null;
  @Column({ name: 'logo_url', type: 'text', nullable: true }) logoUrl!: string | null;
  @Column({ name: 'client_id', type: 'text' }) clientId!: string;
  @Column({ name: 'client_secret_envelope', type: 'bytea', nullable: true }) clientSecretEnvelope!: Buffer | null;
  @Column({ name: 'token_endpoint_auth_method', type: 'varchar', length: 32 }) tokenEndpointAuthMethod!: string;
  @Column({ name: 'issuer_uri', type: 'text' }) issuerUri!: string;
  @Column({ name: 'authorization_endpoint', type: 'text' }) authorizationEndpoint!: string;
  @Column({ name: 'token_endpoint', type: 'text' }) tokenEndpoint!: string;
  @Column({ type: 'jsonb' }) scopes!: { scope: string; description: string }[];
  @Column({ name: 'created_at', ...timestamptz }) createdAt!: Date;
  @Column({ name: 'updated_at', ...timestamptz }) updatedAt!: Date;
}

@Entity({ name: 'service_protected_resources' })
export class ServiceProtectedResourceEntity {
  @PrimaryColumn({ type: 'text' }) uri!: string;
  @Column({ name: 'service_id', type: 'uuid' }) serviceId!: string;
  @Column({ type: 'integer' }) position!: number;
}

@Entity({ name: 'permission_sets' })
export class PermissionSetEntity {
  @PrimaryColumn({ type: 'uuid' }) id!: string;
  @Column({ type: 'varchar', length: 255 }) name!: string;
  @Column({ type: 'text' }) description!: string;
  @Column({ name: 'created_at', ...timestamptz }) createdAt!: Date;
  @Column({ name: 'updated_at', ...timestamptz }) updatedAt!: Date;
}

@Entity({ name: 'permission_set_service_scopes' })
export class PermissionSetServiceScopeEntity {
  @PrimaryColumn({ name: 'permission_set_id', type: 'uuid' }) permissionSetId!: string;
  @PrimaryColumn({ name: 'service_id', type: 'uuid' }) serviceId!: string;
  @Column({ type: 'jsonb' }) scopes!: string[];
  @Column({ name: 'requirement_type', type: 'varchar', length: 32 }) requirementType!: string;
  @Column({ type: 'integer' }) position!: number;
}

@Entity({ name: 'protected_resources' })
export class ProtectedResourceEntity {
  @PrimaryColumn({ type: 'uuid' }) id!: string;
  @Column({ name: 'display_name', type: 'varchar', length: 255 }) displayName!: string;
  @Column({ type: 'text', nullable: true }) description!: string | null;
  @Column({ name: 'logo_url', type: 'text', nullable: true }) logoUrl!: string | null;
  @Column({ name: 'resource_uri', type: 'text' }) resourceUri!: string;
  @Column({ type: 'jsonb' }) scopes!: { scope: string; description: string }[];
  @Column({ name: 'created_at', ...timestamptz }) createdAt!: Date;
  @Column({ name: 'updated_at', ...timestamptz }) updatedAt!: Date;
}

@Entity({ name: 'permission_set_resource_scopes' })
export class PermissionSetResourceScopeEntity {
  @PrimaryColumn({ name: 'permission_set_id', type: 'uuid' }) permissionSetId!: string;
  @PrimaryColumn({ name: 'resource_id', type: 'uuid' }) resourceId!: string;
  @Column({ type: 'jsonb' }) scopes!: string[];
  @Column({ name: 'requirement_type', type: 'varchar', length: 32 }) requirementType!: string;
  @Column({ type: 'integer' }) position!: number;
}

@Entity({ name: 'agent_client_credentials' })
export class AgentClientCredentialEntity {
  @PrimaryColumn({ name: 'agent_id', type: 'uuid' }) agentId!: string;
  @Column({ name: 'secret_sha256', type: 'bytea' }) secretSha256!: Buffer;
  @Column({ name: 'created_at', ...timestamptz }) createdAt!: Date;
  @Column({ name: 'rotated_at', type: 'timestamptz', nullable: true }) rotatedAt!: Date | null;
}

@Entity({ name: 'signing_keys' })
export class SigningKeyEntity {
  @PrimaryColumn({ type: 'varchar', length: 128 }) kid!: string;
  @Column({ type: 'varchar', length: 16 }) algorithm!: string;
  @Column({ name: 'public_jwk', type: 'jsonb' }) publicJwk!: Record<string, string>;
  @Column({ name: 'private_key_envelope', type: 'bytea' }) privateKeyEnvelope!: Buffer;
  @Column({ name: 'is_current', type: 'boolean' }) isCurrent!: boolean;
  @Column({ name: 'created_at', ...timestamptz }) createdAt!: Date;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}

export const REGISTRY_ENTITIES = [
  AgentEntity,
  AgentPermissionSetEntity,
  ServiceEntity,
  ServiceProtectedResourceEntity,
  PermissionSetEntity,
  PermissionSetServiceScopeEntity,
  ProtectedResourceEntity,
  PermissionSetResourceScopeEntity,
  AgentClientCredentialEntity,
  SigningKeyEntity,
];
