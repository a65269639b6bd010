import { randomUUID } from 'node:crypto';
import { ApiClient } from '@broker/testing';

/** An agent registered with one permission set, and what its people can do about it in the console. */
export interface GrantedAgent {
  readonly id: string;
  /** The person allows the agent (POST grants with its one permission set): 201. */
  allow(principal: string): Promise<void>;
  /** The person revokes the agent (DELETE grants): 204. */
  revoke(principal: string): Promise<void>;
}

/** One service and permission set per admin server, which every agent of this helper is assigned. */
const delegations = new Map<string, Promise<{ service: string; permissionSet: string }>>();

async function created(client: ApiClient, path: string, body: Record<string, unknown>): Promise<string> {
  const response = await client.post(path, body);
  if (response.status !== 201) throw new Error(`${path}: ${response.status} ${response.text}`);
  return response.json<{ id: string }>().id;
}

function delegationOf(admin: ApiClient): Promise<{ service: string; permissionSet: string }> {
  let found = delegations.get(admin.baseUrl);
  if (found === undefined) {
    const tag = randomUUID().slice(0, 8);
    found = (async () => {
      const service = await created(admin, '/api/services', {
        display_name: 'Notes',
        client_id: `approvals-notes-${tag}`,
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/authorize',
        token_endpoint: 'https://idp.example.com/token',
        scopes: [{ scope: 'notes.read', description: 'Read your notes' }],
        protected_resources: [`https://approvals-notes-${tag}.example.com/api`],
      });
      const permissionSet = await created(admin, '/api/permission-sets', {
        name: `Read notes ${tag}`,
        description: 'Read your notes',
        service_scopes: [{ service_id: service, scopes: ['notes.read'] }],
      });
      return { service, permissionSet };
    })();
    // A failed setup is not cached: the next call tries again and reports its own failure.
    found.catch(() => delegations.delete(admin.baseUrl));
    delegations.set(admin.baseUrl, found);
  }
  return found;
}

/**
 * Registers an agent (admin API) that `principals` allow (end-user API): tool approvals are
 * only for an agent the person has an active grant for (docs/approvals.md "Grants and approvals").
 */
export async function grantedAgent(
  urls: { readonly admin: string; readonly enduser: string },
  principals: readonly string[],
  displayName = 'Mail Agent',
): Promise<GrantedAgent> {
  const admin = new ApiClient(urls.admin);
  const { service, permissionSet } = await delegationOf(admin);
  const id = await created(admin, '/api/agents', {
    display_name: displayName,
    permission_sets: [{ permission_set_id: permissionSet, requirement_type: 'mandatory' }],
  });
  const agent: GrantedAgent = {
    id,
    allow: async (principal) => {
      const response = await new ApiClient(urls.enduser, principal).post(`/api/consent/agents/${id}/grants`, {
        granted_permission_sets: { [permissionSet]: [service] },
      });
      if (response.status !== 201) throw new Error(`grant: ${response.status} ${response.text}`);
    },
    revoke: async (principal) => {
      const response = await new ApiClient(urls.enduser, principal).delete(`/api/consent/agents/${id}/grants`);
      if (response.status !== 204) throw new Error(`revoke: ${response.status} ${response.text}`);
    },
  };
  for (const principal of principals) await agent.allow(principal);
  return agent;
}
