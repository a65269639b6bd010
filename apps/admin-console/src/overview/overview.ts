import { useQuery } from '@tanstack/react-query';
import { getJson } from '../api/queries';
import type { AdminEvent } from '../activity/kinds';

/** `GET /api/overview`: the broker at a glance (docs/admin-api.md "Overview"). */
export interface Overview {
  readonly mode: 'local' | 'proxy' | 'hybrid';
  readonly status: 'healthy' | 'starting' | 'unhealthy' | 'shutting_down';
  readonly counts: {
    readonly agents: number;
    readonly suspended_agents: number;
    readonly services: number;
    readonly resources: number;
    readonly permission_sets: number;
    readonly active_grants: number;
    readonly pending_approvals: number;
  };
  readonly signing_keys: readonly {
    readonly kid: string;
    readonly algorithm: string;
    readonly is_current: boolean;
    readonly created_at: string;
    readonly age_days: number;
  }[];
  readonly warnings: readonly { readonly code: string; readonly message: string }[];
  readonly recent_admin_actions: readonly AdminEvent[];
}

export function useOverview() {
  return useQuery({ queryKey: ['overview'], queryFn: () => getJson<Overview>('/api/overview') });
}
