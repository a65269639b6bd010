import {
  keepPreviousData,
  useInfiniteQuery,
  useMutation,
  useQueries,
  useQuery,
  useQueryClient,
} from '@tanstack/react-query';
import { noteSignedIn } from '../components/sign-in';
import { forgetRequest } from '../consent/pending-request';
import type { GrantRequest } from '../consent/types';
import type { AuthorizationRequestView } from '../authorization-requests/types';
import { ApiFailure, api, unwrap } from './client';
import type { components } from './user-api';

/**
 * Every query of the console: its key and the hook that reads it, and every change the person makes with the
 * queries it makes stale. A page never writes a key itself, so what a change refreshes is read here, in one place.
 */
export const queryKeys = {
  /** The person (the header's name and picture; the consent page's account note). */
  me: ['me'],
  /** The agents the person delegates to (the agents page, the activity page's names, the consent page's sign-ins). */
  delegations: ['delegations'],
  /** What the person's organisation allowed agents through its identity provider (the agents page). */
  enterpriseAuthorizations: ['enterprise-authorizations'],
  /** When each agent last used each service. */
  lastUsed: ['last-used'],
  /** Every configured service with the person's connection to it. */
  connections: ['third-party-sessions'],
  /** The agents that lose access when the service is disconnected. */
  affectedAgents: (serviceId: string) => ['third-party-affected', serviceId],
  /** The name of an agent the person no longer delegates to, for the activity page. */
  agentName: (agentId: string) => ['activity-agent', agentId],
  activity: (query: ActivityQuery) => ['activity', query],
  /** The names the activity refers to: the agents of the person's history, the MCP servers. */
  activityNames: ['activity-names'],
  /** The agent as the consent page shows it, with the pending request when there is a session_token. */
  consentAgent: (agentId: string, sessionToken: string | null) => ['consent-agent', agentId, sessionToken],
  grant: (agentId: string) => ['grants', agentId],
  /** Every approval list and approval: what a decision or a revocation makes stale. */
  approvals: ['approvals'],
  pendingApprovals: ['approvals', 'pending'],
  rememberedApprovals: ['approvals', 'permanent'],
  approval: (id: string) => ['approvals', 'one', id],
  /** An approval as the activity page shows it now (under `approvals`: a decision makes it stale too). */
  approvalNow: (id: string) => ['approvals', 'now', id],
  scopePreview: (approvalId: string, pattern: string | null) => ['scope-preview', approvalId, pattern],
  /** An authorization request a gateway's refused exchange opened (its link's page). */
  authorizationRequest: (id: string) => ['authorization-request', id],
} as const;

/** What a page does around a change (a dialog closed, a message shown), before the queries it makes stale refresh. */
export interface ChangeHandlers<T> {
  readonly onMutate?: () => void;
  readonly onSuccess?: (answer: T) => void;
  readonly onError?: (error: unknown) => void;
}

/** The broker says a consent request or an approval was already decided, or expired: the page reads it again. */
function decidedElsewhere(error: unknown): boolean {
  return error instanceof ApiFailure && (error.status === 409 || error.status === 410);
}

// The person and the directory of names.

/** The person (from /api/me): name and picture in the header. */
export function useMe() {
  return useQuery({
    queryKey: queryKeys.me,
    queryFn: async () => {
      const me = await unwrap(api.GET('/api/me'));
      noteSignedIn();
      return me;
    },
  });
}

export function useDelegations() {
  return useQuery({ queryKey: queryKeys.delegations, queryFn: () => unwrap(api.GET('/api/consent/agents')) });
}

export function useLastUsed() {
  return useQuery({ queryKey: queryKeys.lastUsed, queryFn: () => unwrap(api.GET('/api/activity/last-used')) });
}

export function useConnections() {
  return useQuery({ queryKey: queryKeys.connections, queryFn: () => unwrap(api.GET('/api/third-party/sessions')) });
}

/** The names of agents the person no longer delegates to, read once each (null: the agent was deleted). */
export function useAgentNames(agentIds: readonly string[]) {
  return useQueries({
    queries: agentIds.map((agentId) => ({
      queryKey: queryKeys.agentName(agentId),
      queryFn: async () => {
        try {
          return (await unwrap(api.GET('/api/consent/agents/{agentId}', { params: { path: { agentId } } }))).data.agent
            .display_name;
        } catch (error) {
          if (error instanceof ApiFailure && error.status === 404) return null;
          throw error;
        }
      },
      staleTime: Infinity,
      retry: false,
    })),
  });
}

// Agents.

/** Revoke every grant of the agent (and end its sign-ins, its pending requests and remembered decisions). */
export function useRevokeDelegation(agentId: string, handlers: ChangeHandlers<unknown>) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/consent/agents/{agentId}/grants', { params: { path: { agentId } } })),
    onMutate: handlers.onMutate,
    onSuccess: async (answer) => {
      handlers.onSuccess?.(answer);
      await Promise.all([
        queries.invalidateQueries({ queryKey: queryKeys.delegations }),
        queries.invalidateQueries({ queryKey: queryKeys.grant(agentId) }),
        // The agent's approvals ended with the grant (docs/approvals.md "Grants and approvals").
        queries.invalidateQueries({ queryKey: queryKeys.approvals }),
      ]);
    },
    onError: handlers.onError,
  });
}

/** What the person's organisation allowed agents through its identity provider, live ones, newest first. */
export function useEnterpriseAuthorizations() {
  return useQuery({
    queryKey: queryKeys.enterpriseAuthorizations,
    queryFn: () => unwrap(api.GET('/api/consent/enterprise-authorizations')),
  });
}

/** Revoke what the organisation allowed an agent for one MCP server: its current tokens stop working at once. */
export function useRevokeEnterpriseAuthorization(authorizationId: string, handlers: ChangeHandlers<unknown>) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(
        api.DELETE('/api/consent/enterprise-authorizations/{authorizationId}', {
          params: { path: { authorizationId } },
        }),
      ),
    onMutate: handlers.onMutate,
    onSuccess: async (answer) => {
      handlers.onSuccess?.(answer);
      await queries.invalidateQueries({ queryKey: queryKeys.enterpriseAuthorizations });
    },
    // Revoked meanwhile (another tab, the administrator) or expired: the list is read again.
    onError: async (error) => {
      handlers.onError?.(error);
      if (error instanceof ApiFailure && error.status === 404)
        await queries.invalidateQueries({ queryKey: queryKeys.enterpriseAuthorizations });
    },
  });
}

// Consent.

const withToken = (sessionToken: string | null) => (sessionToken === null ? {} : { session_token: sessionToken });

/** The request was answered meanwhile (another tab, another device): 409 `session_used`. */
function answeredElsewhere(error: unknown): boolean {
  return error instanceof ApiFailure && error.status === 409 && error.code === 'session_used';
}

/** The agent as the consent page shows it; with a session_token also the pending request (read once: it expires). */
export function useAgentDetail(agentId: string, sessionToken: string | null) {
  return useQuery({
    queryKey: queryKeys.consentAgent(agentId, sessionToken),
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
    queryKey: queryKeys.grant(agentId),
    queryFn: async () =>
      (await unwrap(api.GET('/api/consent/agents/{agentId}/grants', { params: { path: { agentId } } }))).data[0] ??
      null,
  });
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
        queries.invalidateQueries({ queryKey: queryKeys.grant(agentId) }),
        queries.invalidateQueries({ queryKey: queryKeys.delegations }),
      ]);
    },
    // Read the request again: the page then shows what was decided instead of the form.
    onError: async (error) => {
      if (answeredElsewhere(error))
        await queries.invalidateQueries({ queryKey: queryKeys.consentAgent(agentId, sessionToken) });
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
        await queries.invalidateQueries({ queryKey: queryKeys.consentAgent(agentId, sessionToken) });
    },
  });
}

// Connections.

type Refreshed = components['schemas']['SessionView'];
type Disconnected = components['schemas']['TerminatedSession'];

/** The agents that lose access when the service is disconnected, read each time the dialog opens. */
export function useAffectedAgents(serviceId: string, enabled: boolean) {
  return useQuery({
    queryKey: queryKeys.affectedAgents(serviceId),
    queryFn: () =>
      unwrap(
        api.GET('/api/third-party/{serviceId}/session/affected-agents', {
          params: { path: { serviceId } },
        }),
      ),
    enabled,
    staleTime: 0,
  });
}

/** Refresh the connection's access token now. */
export function useRefreshConnection(serviceId: string, handlers: ChangeHandlers<Refreshed>) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/third-party/{serviceId}/session/refresh', { params: { path: { serviceId } } })),
    onMutate: handlers.onMutate,
    onSuccess: async ({ data }) => {
      handlers.onSuccess?.(data);
      await queries.invalidateQueries({ queryKey: queryKeys.connections });
    },
    onError: handlers.onError,
  });
}

/** Disconnect: the broker deletes the tokens it holds; the agents that depended on it lose access. */
export function useDisconnect(serviceId: string, handlers: ChangeHandlers<Disconnected>) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/third-party/{serviceId}/session', { params: { path: { serviceId } } })),
    onMutate: handlers.onMutate,
    onSuccess: async ({ data }) => {
      handlers.onSuccess?.(data);
      await Promise.all([
        queries.invalidateQueries({ queryKey: queryKeys.connections }),
        queries.invalidateQueries({ queryKey: queryKeys.delegations }),
      ]);
    },
    onError: handlers.onError,
  });
}

// Approvals.

type ApproveBody = components['schemas']['ApproveApprovalDto'];
type DenyBody = components['schemas']['DenyApprovalDto'];
type Approved = components['schemas']['ApprovedView'];
type Denied = components['schemas']['DeniedView'];

/** How often the pending list asks again, so a new request shows up by itself. */
const POLL_MS = 3_000;

/** The person's pending tool approvals, refreshing by itself. */
export function usePendingApprovals() {
  return useQuery({
    queryKey: queryKeys.pendingApprovals,
    queryFn: () => unwrap(api.GET('/api/approvals/pending')),
    refetchInterval: POLL_MS,
    staleTime: 0,
  });
}

/** The person's standing permanent approvals and denials. */
export function useRememberedApprovals() {
  return useQuery({
    queryKey: queryKeys.rememberedApprovals,
    queryFn: () => unwrap(api.GET('/api/approvals/permanent')),
  });
}

export function useApproval(id: string) {
  return useQuery({
    queryKey: queryKeys.approval(id),
    queryFn: () => unwrap(api.GET('/api/approvals/{id}', { params: { path: { id } } })),
  });
}

/**
 * What an approval with this pattern (its JSON text) would cover, as the broker checks it; nothing is asked while
 * `pattern` is null. A refusal is shown in words at once (no retry).
 */
export function useScopePreview(approvalId: string, pattern: string | null) {
  return useQuery({
    queryKey: queryKeys.scopePreview(approvalId, pattern),
    queryFn: () =>
      unwrap(
        api.POST('/api/approvals/{id}/scope-preview', {
          params: { path: { id: approvalId } },
          body: { params_pattern: JSON.parse(pattern ?? 'null') as Record<string, string> | null },
        }),
      ),
    enabled: pattern !== null,
    retry: false,
    staleTime: Infinity,
  });
}

/** Approve once, for the session or always; a 409 or 410 (decided elsewhere, expired) reads the approvals again. */
export function useApprove(approvalId: string, handlers: ChangeHandlers<Approved>) {
  const queries = useQueryClient();
  const settle = () => queries.invalidateQueries({ queryKey: queryKeys.approvals });
  return useMutation({
    mutationFn: (body: ApproveBody) =>
      unwrap(api.POST('/api/approvals/{id}/approve', { params: { path: { id: approvalId } }, body })),
    onMutate: handlers.onMutate,
    onSuccess: async ({ data }) => {
      handlers.onSuccess?.(data);
      await settle();
    },
    onError: async (error) => {
      handlers.onError?.(error);
      if (decidedElsewhere(error)) await settle();
    },
  });
}

/** Deny once or always; a 409 or 410 (decided elsewhere, expired) reads the approvals again. */
export function useDenyApproval(approvalId: string, handlers: ChangeHandlers<Denied>) {
  const queries = useQueryClient();
  const settle = () => queries.invalidateQueries({ queryKey: queryKeys.approvals });
  return useMutation({
    mutationFn: (body: DenyBody) =>
      unwrap(api.POST('/api/approvals/{id}/deny', { params: { path: { id: approvalId } }, body })),
    onMutate: handlers.onMutate,
    onSuccess: async ({ data }) => {
      handlers.onSuccess?.(data);
      await settle();
    },
    onError: async (error) => {
      handlers.onError?.(error);
      if (decidedElsewhere(error)) await settle();
    },
  });
}

/** Revoke a remembered (permanent) approval or denial. */
export function useRevokeApproval(approvalId: string, handlers: ChangeHandlers<unknown>) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/approvals/{id}/revoke', { params: { path: { id: approvalId } } })),
    onMutate: handlers.onMutate,
    onSuccess: async (answer) => {
      handlers.onSuccess?.(answer);
      await queries.invalidateQueries({ queryKey: queryKeys.approvals });
    },
    onError: handlers.onError,
  });
}

// Activity.

/** Events per page of the activity list (the API allows 1-100). */
const ACTIVITY_PAGE_SIZE = 25;

/** The activity list's filters; a preset range is computed when picked, so "Load more" continues the same list. */
export interface ActivityQuery {
  readonly agent_id?: string;
  readonly service_id?: string;
  readonly type?: string[];
  readonly from?: string;
  readonly to?: string;
}

/** The person's activity, newest first, a page at a time. */
export function useActivity(query: ActivityQuery, enabled: boolean) {
  return useInfiniteQuery({
    queryKey: queryKeys.activity(query),
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/api/activity', {
          params: {
            query: { ...query, limit: ACTIVITY_PAGE_SIZE, ...(pageParam === null ? {} : { cursor: pageParam }) },
          },
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.next_cursor,
    enabled,
    placeholderData: keepPreviousData,
  });
}

/** The names the person's activity refers to (every agent of their history, allowed or not; the MCP servers). */
export function useActivityNames() {
  return useQuery({ queryKey: queryKeys.activityNames, queryFn: () => unwrap(api.GET('/api/activity/names')) });
}

type ApprovalRecord = components['schemas']['ApprovalView'];

/** What became of an approval an event names: the record, `expired` (410), or `gone` (404: deleted, or never the person's). */
export type ApprovalNow =
  | { readonly kind: 'found'; readonly approval: ApprovalRecord }
  | { readonly kind: 'expired' }
  | { readonly kind: 'gone' };

/** The approvals the shown events name, each read as it is now (one request per approval, kept a while). */
export function useApprovalsNow(ids: readonly string[]) {
  return useQueries({
    queries: ids.map((id) => ({
      queryKey: queryKeys.approvalNow(id),
      queryFn: async (): Promise<ApprovalNow> => {
        try {
          return {
            kind: 'found',
            approval: (await unwrap(api.GET('/api/approvals/{id}', { params: { path: { id } } }))).data,
          };
        } catch (error) {
          if (error instanceof ApiFailure && error.status === 410) return { kind: 'expired' };
          if (error instanceof ApiFailure && error.status === 404) return { kind: 'gone' };
          throw error;
        }
      },
      staleTime: 30_000,
      retry: false,
    })),
  });
}

// Authorization requests.

/** The request as it is now (pending, completed, denied or expired): the broker keeps it, so a reload shows it again. */
export function useAuthorizationRequest(id: string) {
  return useQuery({
    queryKey: queryKeys.authorizationRequest(id),
    queryFn: async () => (await unwrap(api.GET('/api/authorization-requests/{id}', { params: { path: { id } } }))).data,
    // A 403 (someone else's link), 404 or 400 does not change by asking again.
    retry: (count, error) => !(error instanceof ApiFailure && error.status < 500) && count < 2,
  });
}

/**
 * Allow (with the new grant's `valid_until` when there is none yet) or Deny. The answer is the request as it is
 * now; a 409 (answered elsewhere) or 410 (expired) reads it again, so the page shows what became of it.
 */
export function useAnswerAuthorizationRequest(id: string) {
  const queries = useQueryClient();
  const settle = (view: AuthorizationRequestView) => queries.setQueryData(queryKeys.authorizationRequest(id), view);
  const reread = async (error: unknown) => {
    if (decidedElsewhere(error)) await queries.invalidateQueries({ queryKey: queryKeys.authorizationRequest(id) });
  };
  const allow = useMutation({
    mutationFn: async (validUntil: string | null) =>
      (
        await unwrap(
          api.POST('/api/authorization-requests/{id}/allow', {
            params: { path: { id } },
            body: { valid_until: validUntil },
          }),
        )
      ).data,
    onSuccess: async (view) => {
      settle(view);
      // The grant was written or extended.
      await Promise.all([
        queries.invalidateQueries({ queryKey: queryKeys.delegations }),
        queries.invalidateQueries({ queryKey: queryKeys.grant(view.agent.id) }),
      ]);
    },
    onError: reread,
  });
  const deny = useMutation({
    mutationFn: async () =>
      (await unwrap(api.POST('/api/authorization-requests/{id}/deny', { params: { path: { id } } }))).data,
    onSuccess: settle,
    onError: reread,
  });
  return { allow, deny };
}
