import type { components } from '../api/admin-api';

type Schemas = components['schemas'];

/** How an agent's permission set is required of the person: mandatory, optional, or every scope of it. */
export type RequirementType = 'mandatory' | 'optional' | 'require_all_scopes';

/** An administrator's suspension of an agent (nothing deleted; resume restores everything). */
export type Suspension = Schemas['AgentSuspensionResponse'];

/** An agent as the admin API answers it, with its suspension (`null` when it is not suspended). */
export type Agent = Schemas['AgentResponse'];

/** The body of a create or a full replacement. */
export type AgentBody = Schemas['AgentDto'];

export type PermissionSet = Schemas['PermissionSetResponse'];

export type IssuedCredentials = Schemas['IssuedClientCredentialsResponse'] & {
  readonly previous_invalidated_at?: string;
};
export type CredentialsMetadata = Schemas['ClientCredentialsMetadataResponse'];

export type EnterpriseAuthorization = Schemas['AgentEnterpriseAuthorizationResponse'];

/** One person's active grant to an agent, as administrators read it (never a token). */
export type AdminGrant = Schemas['AdminGrantResponse'];
