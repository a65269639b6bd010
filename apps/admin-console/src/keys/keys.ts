import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { components } from '../api/admin-api';
import { api, unwrap } from '../api/client';

export type SigningKey = components['schemas']['SigningKeyResponse'];
export type Algorithm = SigningKey['algorithm'];

export const ALGORITHMS: readonly { value: Algorithm; label: string }[] = [
  { value: 'ES256', label: 'ES256 (ECDSA P-256, recommended)' },
  { value: 'RS256', label: 'RS256 (RSA 2048, for verifiers without ECDSA)' },
  { value: 'EdDSA', label: 'EdDSA (Ed25519)' },
];

const KEYS = ['signing-keys'] as const;

/** Every signing key, retired ones included, newest first. */
export function useSigningKeys() {
  return useQuery({
    queryKey: KEYS,
    queryFn: async () => (await unwrap(api.GET('/api/oauth2-server/signing-keys'))).items,
  });
}

/** After a change: the list and the overview's keys are read again. */
function useRefresh() {
  const queries = useQueryClient();
  return () =>
    Promise.all([queries.invalidateQueries({ queryKey: KEYS }), queries.invalidateQueries({ queryKey: ['overview'] })]);
}

export function useAddKey() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (algorithm: Algorithm) => unwrap(api.POST('/api/oauth2-server/signing-keys', { body: { algorithm } })),
    onSettled: refresh,
  });
}

export function useMakeCurrent() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (kid: string) =>
      unwrap(api.PUT('/api/oauth2-server/signing-keys/{kid}/current', { params: { path: { kid } } })),
    onSettled: refresh,
  });
}

/** Rotation: a new key added, then made current (two calls; the first may succeed alone). */
export function useRotate() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: async (algorithm: Algorithm) => {
      const added = await unwrap(api.POST('/api/oauth2-server/signing-keys', { body: { algorithm } }));
      try {
        return await unwrap(
          api.PUT('/api/oauth2-server/signing-keys/{kid}/current', { params: { path: { kid: added.kid } } }),
        );
      } catch (error) {
        throw new HalfRotated(added.kid, error);
      }
    },
    onSettled: refresh,
  });
}

/** The new key was added but could not be made current. */
export class HalfRotated extends Error {
  constructor(
    readonly kid: string,
    override readonly cause: unknown,
  ) {
    super(`key ${kid} added, not made current`);
    this.name = 'HalfRotated';
  }
}

export function useRetire() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (kid: string) =>
      unwrap(api.DELETE('/api/oauth2-server/signing-keys/{kid}', { params: { path: { kid } } })),
    onSettled: refresh,
  });
}
