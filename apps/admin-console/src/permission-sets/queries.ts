import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { registryKeys } from '../services/queries';
import type { PermissionSet, PermissionSetBody } from './permission-set-form';

export function usePermissionSets() {
  return useQuery({ queryKey: registryKeys.permissionSets, queryFn: () => unwrap(api.GET('/api/permission-sets')) });
}

export function usePermissionSet(id: string | undefined) {
  return useQuery({
    queryKey: registryKeys.permissionSet(id ?? ''),
    queryFn: () =>
      unwrap(api.GET('/api/permission-sets/{permissionSetId}', { params: { path: { permissionSetId: id ?? '' } } })),
    enabled: id !== undefined,
  });
}

/** Creates (no id) or replaces a permission set; every permission set query is stale after. */
export function useSavePermissionSet(id: string | undefined) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: PermissionSetBody): Promise<PermissionSet> =>
      id === undefined
        ? unwrap(api.POST('/api/permission-sets', { body }))
        : unwrap(
            api.PUT('/api/permission-sets/{permissionSetId}', { params: { path: { permissionSetId: id } }, body }),
          ),
    onSuccess: async (set) => {
      client.setQueryData(registryKeys.permissionSet(set.id), set);
      await client.invalidateQueries({ queryKey: registryKeys.permissionSets, exact: true });
      await client.invalidateQueries({ queryKey: ['permission-sets', 'covering'] });
    },
  });
}

export function useDeletePermissionSet(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(api.DELETE('/api/permission-sets/{permissionSetId}', { params: { path: { permissionSetId: id } } })),
    onSuccess: async () => {
      client.removeQueries({ queryKey: registryKeys.permissionSet(id), exact: true });
      await client.invalidateQueries({ queryKey: registryKeys.permissionSets, exact: true });
      await client.invalidateQueries({ queryKey: ['permission-sets', 'covering'] });
    },
  });
}

/** The agents assigned a permission set (a refused delete's explanation). */
export async function agentsAssigned(permissionSetId: string): Promise<string[]> {
  const agents = await unwrap(api.GET('/api/agents'));
  return agents
    .filter((agent) => agent.permission_sets.some((ref) => ref.permission_set_id === permissionSetId))
    .map((agent) => agent.display_name);
}
