import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { registryKeys } from '../services/queries';
import type { Resource, ResourceBody } from './resource-form';

export function useResources() {
  return useQuery({ queryKey: registryKeys.resources, queryFn: () => unwrap(api.GET('/api/resources')) });
}

export function useResource(id: string | undefined) {
  return useQuery({
    queryKey: registryKeys.resource(id ?? ''),
    queryFn: () => unwrap(api.GET('/api/resources/{resourceId}', { params: { path: { resourceId: id ?? '' } } })),
    enabled: id !== undefined,
  });
}

/** Registers (no id) or replaces an MCP server; its list and page are stale after. */
export function useSaveResource(id: string | undefined) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ResourceBody): Promise<Resource> =>
      id === undefined
        ? unwrap(api.POST('/api/resources', { body }))
        : unwrap(api.PUT('/api/resources/{resourceId}', { params: { path: { resourceId: id } }, body })),
    onSuccess: async (resource) => {
      client.setQueryData(registryKeys.resource(resource.id), resource);
      await client.invalidateQueries({ queryKey: registryKeys.resources, exact: true });
    },
  });
}

export function useDeleteResource(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/resources/{resourceId}', { params: { path: { resourceId: id } } })),
    onSuccess: async () => {
      client.removeQueries({ queryKey: registryKeys.resource(id), exact: true });
      await client.invalidateQueries({ queryKey: registryKeys.resources, exact: true });
    },
  });
}
