import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { ApiFailure, api, unwrap } from '../api/client';
import type {
  AdminGrant,
  Agent,
  AgentBody,
  CredentialsMetadata,
  EnterpriseAuthorization,
  IssuedCredentials,
  PermissionSet,
  Suspension,
} from './types';

/**
 * The agents pages' queries and the changes an administrator makes to an agent, each with what it makes stale. The
 * key roots are the areas' (`agents`, `permission-sets`) so another page's change of the same thing refreshes these.
 */
export const agentKeys = {
  all: ['agents'],
  one: (id: string) => ['agents', id],
  credentials: (id: string) => ['agents', id, 'client-credentials'],
  grants: (id: string) => ['agents', id, 'grants'],
  enterpriseAuthorizations: (id: string) => ['agents', id, 'enterprise-authorizations'],
  permissionSets: ['permission-sets'],
  /** The overview's counts (agents, suspended agents, active grants) and the activity: stale after any change here. */
  overview: ['overview'],
  events: ['events'],
} as const;

/** What a page does around a change (a dialog closed, a message shown). */
export interface ChangeHandlers<T> {
  readonly onMutate?: () => void;
  readonly onSuccess?: (answer: T) => void;
  readonly onError?: (error: unknown) => void;
}

function invalidateAgent(client: QueryClient, id: string | undefined): Promise<unknown> {
  return Promise.all([
    client.invalidateQueries({ queryKey: id === undefined ? agentKeys.all : agentKeys.one(id) }),
    client.invalidateQueries({ queryKey: agentKeys.all, exact: true }),
    client.invalidateQueries({ queryKey: agentKeys.overview }),
    client.invalidateQueries({ queryKey: agentKeys.events }),
  ]);
}

export function useAgents() {
  return useQuery({
    queryKey: agentKeys.all,
    queryFn: async (): Promise<Agent[]> => unwrap(api.GET('/api/agents')),
  });
}

export function useAgent(id: string) {
  return useQuery({
    queryKey: agentKeys.one(id),
    queryFn: async (): Promise<Agent> =>
      unwrap(api.GET('/api/agents/{agentId}', { params: { path: { agentId: id } } })),
  });
}

/**
 * Every permission set, for the agent's choice of them (oldest first, as the API lists them). The cache holds the
 * API's answer as the permission sets pages read it (same key, same shape); this reads its items.
 */
export function usePermissionSets() {
  return useQuery({
    queryKey: agentKeys.permissionSets,
    queryFn: () => unwrap(api.GET('/api/permission-sets')),
    select: (answer): PermissionSet[] => answer.items,
  });
}

export function useCreateAgent(handlers: ChangeHandlers<Agent>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (body: AgentBody): Promise<Agent> => unwrap(api.POST('/api/agents', { body })),
    onMutate: handlers.onMutate,
    onSuccess: async (agent) => {
      client.setQueryData(agentKeys.one(agent.id), agent);
      await invalidateAgent(client, undefined);
      handlers.onSuccess?.(agent);
    },
    onError: handlers.onError,
  });
}

export function useReplaceAgent(id: string, handlers: ChangeHandlers<Agent>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (body: AgentBody): Promise<Agent> =>
      unwrap(api.PUT('/api/agents/{agentId}', { params: { path: { agentId: id } }, body })),
    onMutate: handlers.onMutate,
    onSuccess: async (agent) => {
      client.setQueryData(agentKeys.one(id), agent);
      await invalidateAgent(client, undefined);
      handlers.onSuccess?.(agent);
    },
    onError: handlers.onError,
  });
}

export function useDeleteAgent(id: string, handlers: ChangeHandlers<void>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<void> =>
      unwrap(api.DELETE('/api/agents/{agentId}', { params: { path: { agentId: id } } })),
    onMutate: handlers.onMutate,
    onSuccess: async () => {
      client.removeQueries({ queryKey: agentKeys.one(id) });
      await invalidateAgent(client, undefined);
      handlers.onSuccess?.();
    },
    onError: handlers.onError,
  });
}

// Client credentials (RFC 6749 §2.3.1): the secret is in one answer only, never in the cache.

/** The agent's client credentials metadata; `null` when it has none (404 `client credentials not found`). */
export function useCredentials(id: string) {
  return useQuery({
    queryKey: agentKeys.credentials(id),
    queryFn: async (): Promise<CredentialsMetadata | null> => {
      try {
        return await unwrap(api.GET('/api/agents/{agentId}/client-credentials', { params: { path: { agentId: id } } }));
      } catch (error) {
        if (error instanceof ApiFailure && error.code === 'client credentials not found') return null;
        throw error;
      }
    },
  });
}

/** Creates the agent's first secret, or rotates it (the previous one stops at once). The answer holds the secret. */
export function useIssueCredentials(id: string, handlers: ChangeHandlers<IssuedCredentials>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<IssuedCredentials> =>
      unwrap(api.POST('/api/agents/{agentId}/client-credentials', { params: { path: { agentId: id } } })),
    onMutate: handlers.onMutate,
    onSuccess: async (issued) => {
      handlers.onSuccess?.(issued);
      await client.invalidateQueries({ queryKey: agentKeys.credentials(id) });
    },
    onError: handlers.onError,
  });
}

export function useRevokeCredentials(id: string, handlers: ChangeHandlers<void>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<void> =>
      unwrap(api.DELETE('/api/agents/{agentId}/client-credentials', { params: { path: { agentId: id } } })),
    onMutate: handlers.onMutate,
    onSuccess: async () => {
      client.setQueryData(agentKeys.credentials(id), null);
      await client.invalidateQueries({ queryKey: agentKeys.credentials(id) });
      handlers.onSuccess?.();
    },
    onError: handlers.onError,
  });
}

// Grants across people.

export function useAgentGrants(id: string) {
  return useQuery({
    queryKey: agentKeys.grants(id),
    queryFn: async (): Promise<AdminGrant[]> =>
      (await unwrap(api.GET('/api/agents/{agentId}/grants', { params: { path: { agentId: id } } }))).items,
  });
}

async function afterGrantsChanged(client: QueryClient, id: string): Promise<void> {
  await Promise.all([
    client.invalidateQueries({ queryKey: agentKeys.grants(id) }),
    client.invalidateQueries({ queryKey: agentKeys.overview }),
    client.invalidateQueries({ queryKey: agentKeys.events }),
  ]);
}

export function useRevokeGrant(id: string, grantId: string, handlers: ChangeHandlers<void>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<void> =>
      unwrap(api.DELETE('/api/agents/{agentId}/grants/{grantId}', { params: { path: { agentId: id, grantId } } })),
    onMutate: handlers.onMutate,
    onSuccess: async () => {
      await afterGrantsChanged(client, id);
      handlers.onSuccess?.();
    },
    onError: handlers.onError,
  });
}

export function useRevokeAllGrants(id: string, handlers: ChangeHandlers<{ revoked: number }>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<{ revoked: number }> =>
      unwrap(api.DELETE('/api/agents/{agentId}/grants', { params: { path: { agentId: id } } })),
    onMutate: handlers.onMutate,
    onSuccess: async (answer) => {
      await afterGrantsChanged(client, id);
      handlers.onSuccess?.(answer);
    },
    onError: handlers.onError,
  });
}

// Enterprise authorizations (what people's identity providers allowed the agent).

export function useEnterpriseAuthorizations(id: string) {
  return useQuery({
    queryKey: agentKeys.enterpriseAuthorizations(id),
    queryFn: async (): Promise<EnterpriseAuthorization[]> =>
      (await unwrap(api.GET('/api/agents/{agentId}/enterprise-authorizations', { params: { path: { agentId: id } } })))
        .items,
  });
}

export function useRevokeEnterpriseAuthorization(id: string, authorizationId: string, handlers: ChangeHandlers<void>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<void> =>
      unwrap(
        api.DELETE('/api/agents/{agentId}/enterprise-authorizations/{authorizationId}', {
          params: { path: { agentId: id, authorizationId } },
        }),
      ),
    onMutate: handlers.onMutate,
    onSuccess: async () => {
      await Promise.all([
        client.invalidateQueries({ queryKey: agentKeys.enterpriseAuthorizations(id) }),
        client.invalidateQueries({ queryKey: agentKeys.events }),
      ]);
      handlers.onSuccess?.();
    },
    onError: handlers.onError,
  });
}

// Suspension: reversible, unlike delete.

export function useSuspendAgent(id: string, handlers: ChangeHandlers<Suspension>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (reason: string | null): Promise<Suspension> =>
      unwrap(
        api.PUT('/api/agents/{agentId}/suspension', {
          params: { path: { agentId: id } },
          body: reason === null ? {} : { reason },
        }),
      ),
    onMutate: handlers.onMutate,
    onSuccess: async (suspension) => {
      await invalidateAgent(client, id);
      handlers.onSuccess?.(suspension);
    },
    onError: handlers.onError,
  });
}

export function useResumeAgent(id: string, handlers: ChangeHandlers<void>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (): Promise<void> =>
      unwrap(api.DELETE('/api/agents/{agentId}/suspension', { params: { path: { agentId: id } } })),
    onMutate: handlers.onMutate,
    onSuccess: async () => {
      await invalidateAgent(client, id);
      handlers.onSuccess?.();
    },
    onError: handlers.onError,
  });
}
