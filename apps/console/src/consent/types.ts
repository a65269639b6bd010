import type { components } from '../api/user-api';

export type Grant = components['schemas']['GrantView'];
export type ConsentService = components['schemas']['ConsentServiceView'];

/** A permission set as the consent page shows it: its services and its MCP servers, each with the set's scopes. */
export type PermissionSet = components['schemas']['ConsentPermissionSetView'];
/**
 * A protected resource (an MCP server) the agent's permission sets reach: the broker is its
 * authorization server, so there is no account to connect; `granted` and `requested` say
 * whether the grant delegates it and whether the pending request asks for it.
 */
export type ConsentResource = components['schemas']['ConsentResourceView'];
export type AgentDetail = components['schemas']['AgentDetail'];

/** What Allow sends: the permission sets granted (each with its scopes) and until when. */
export interface GrantRequest {
  readonly granted_permission_sets: Record<string, string[]>;
  readonly valid_until: string | null;
}
