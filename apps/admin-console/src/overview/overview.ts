import { useQuery } from '@tanstack/react-query';
import type { components } from '../api/admin-api';
import { api, unwrap } from '../api/client';

/** `GET /api/overview`: the broker at a glance (docs/admin-api.md). */
export type Overview = components['schemas']['OverviewResponse'];

export function useOverview() {
  return useQuery({ queryKey: ['overview'], queryFn: () => unwrap(api.GET('/api/overview')) });
}
