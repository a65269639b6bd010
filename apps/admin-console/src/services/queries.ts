import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';
import { getJson } from '../api/queries';
import type { Service, ServiceBody } from './service-form';

/** The registry's query keys: a write makes its list and the other registry pages' lists stale. */
export const registryKeys = {
  services: ['services'],
  service: (id: string) => ['services', id],
  resources: ['resources'],
  resource: (id: string) => ['resources', id],
  permissionSets: ['permission-sets'],
  permissionSet: (id: string) => ['permission-sets', id],
  /** The sets covering a service or a resource (a 409's explanation). */
  setsCovering: (filter: { service_id?: string; resource_id?: string }) => ['permission-sets', 'covering', filter],
} as const;

export function useServices() {
  return useQuery({ queryKey: registryKeys.services, queryFn: () => unwrap(api.GET('/api/services')) });
}

export function useService(id: string | undefined) {
  return useQuery({
    queryKey: registryKeys.service(id ?? ''),
    queryFn: () => unwrap(api.GET('/api/services/{serviceId}', { params: { path: { serviceId: id ?? '' } } })),
    enabled: id !== undefined,
  });
}

/** Registers (no id) or replaces a service; its list and page are stale after. */
export function useSaveService(id: string | undefined) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ServiceBody): Promise<Service> =>
      id === undefined
        ? unwrap(api.POST('/api/services', { body }))
        : unwrap(api.PUT('/api/services/{serviceId}', { params: { path: { serviceId: id } }, body })),
    onSuccess: async (service) => {
      client.setQueryData(registryKeys.service(service.id), service);
      await client.invalidateQueries({ queryKey: registryKeys.services, exact: true });
    },
  });
}

export function useDeleteService(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/services/{serviceId}', { params: { path: { serviceId: id } } })),
    onSuccess: async () => {
      client.removeQueries({ queryKey: registryKeys.service(id), exact: true });
      await client.invalidateQueries({ queryKey: registryKeys.services, exact: true });
    },
  });
}

/** The permission sets covering a service or a protected resource (`GET /api/permission-sets?service_id=`). */
export function fetchSetsCovering(filter: { service_id?: string; resource_id?: string }) {
  return unwrap(api.GET('/api/permission-sets', { params: { query: filter } }));
}

/** One active grant as the admin API lists it (`GET /api/grants`): only what a 409's explanation names. */
interface GrantSummary {
  readonly principal: string;
  readonly agent_display_name: string;
  readonly permission_sets: readonly { readonly permission_set_id: string }[];
}

/**
 * Who holds the active grants that reference a service (`service_id`) or a permission set (by its id): "alice@…
 * (Week planner)". Empty when the API cannot say (the grants list is newer than some brokers).
 */
export async function grantsReferencing(filter: {
  service_id?: string;
  permission_set_id?: string;
}): Promise<string[]> {
  try {
    const query = filter.service_id !== undefined ? `?service_id=${encodeURIComponent(filter.service_id)}` : '';
    const { items } = await getJson<{ items: GrantSummary[] }>(`/api/grants${query}`);
    return items
      .filter(
        (grant) =>
          filter.permission_set_id === undefined ||
          grant.permission_sets.some((set) => set.permission_set_id === filter.permission_set_id),
      )
      .map((grant) => `${grant.principal} (${grant.agent_display_name})`);
  } catch {
    return [];
  }
}
