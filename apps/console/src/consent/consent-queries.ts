import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiFailure, api, unwrap } from '../api/client';
import type { components } from '../api/user-api';
import { forgetRequest } from './pending-request';

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

const withToken = (sessionToken: string | null) => (sessionToken === null ? {} : { session_token: sessionToken });

/** The request was answered meanwhile (another tab, another device): 409 `session_used`. */
function answeredElsewhere(error: unknown): boolean {
  return error instanceof ApiFailure && error.status === 409 && error.code === 'session_used';
}

/** The agent as the consent page shows it; with a session_token also the pending request (read once: it expires). */
export function useAgentDetail(agentId: string, sessionToken: string | null) {
  return useQuery({
    queryKey: ['consent-agent', agentId, sessionToken],
    queryFn: async () =>
      (
        await unwrap(
          api.GET('/api/consent/agents/{agentId}', { params: { path: { agentId }, query: withToken(sessionToken) } }),
        )
      ).data,
    // A refetch after the token's ten minutes would turn a form being filled in into an error.
    staleTime: sessionToken === null ? 5_000 : Infinity,
    refetchOnWindowFocus: sessionToken === null,
  });
}

/** The person's active grant for the agent, if any (a list of zero or one). */
export function useCurrentGrant(agentId: string) {
  return useQuery({
    queryKey: ['grants', agentId],
    queryFn: async () =>
      (await unwrap(api.GET('/api/consent/agents/{agentId}/grants', { params: { path: { agentId } } }))).data[0] ??
      null,
  });
}

export interface GrantRequest {
  readonly granted_permission_sets: Record<string, string[]>;
  readonly valid_until: string | null;
}

/** Allow: writes the grant; with a session_token the answer carries the `redirect_url` that resumes the request. */
export function useAllow(agentId: string, sessionToken: string | null) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (body: GrantRequest) => {
      const answer = await unwrap(
        api.POST('/api/consent/agents/{agentId}/grants', {
          params: { path: { agentId }, query: withToken(sessionToken) },
          body,
        }),
      );
      return answer ?? null;
    },
    onSuccess: async () => {
      // Answered: the tab no longer keeps the request.
      if (sessionToken !== null) forgetRequest(agentId);
      await Promise.all([
        queries.invalidateQueries({ queryKey: ['grants', agentId] }),
        queries.invalidateQueries({ queryKey: ['delegations'] }),
      ]);
    },
    // Read the request again: the page then shows what was decided instead of the form.
    onError: async (error) => {
      if (answeredElsewhere(error))
        await queries.invalidateQueries({ queryKey: ['consent-agent', agentId, sessionToken] });
    },
  });
}

/** Deny: declines the pending request; the answer is the client's redirect_uri with error=access_denied. */
export function useDeny(agentId: string, sessionToken: string) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async () =>
      (
        await unwrap(
          api.POST('/api/consent/agents/{agentId}/deny', {
            params: { path: { agentId }, query: { session_token: sessionToken } },
          }),
        )
      ).data,
    onSuccess: () => forgetRequest(agentId),
    onError: async (error) => {
      if (answeredElsewhere(error))
        await queries.invalidateQueries({ queryKey: ['consent-agent', agentId, sessionToken] });
    },
  });
}
