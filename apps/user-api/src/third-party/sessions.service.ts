import { ApiError, Clock, type Principal, type Service } from '@broker/domain';
import { EventLedger, sessionDisconnected } from '@broker/events';
import {
  GrantRepository,
  ServiceRepository,
  SessionRepository,
  type ThirdPartySessionRecord,
} from '@broker/persistence';
import { currentTraceId } from '@broker/telemetry';
import { EnvelopeCipher, TokenVault } from '@broker/vault';
import { Injectable } from '@nestjs/common';
import type {
  AgentRef,
  SessionDetail,
  SessionListItem,
  SessionServiceView,
  SessionView,
  TerminatedSession,
} from './sessions.responses';

/** The caller's third-party sessions: list, detail, affected agents, delete, forced refresh. */
@Injectable()
export class SessionsService {
  constructor(
    private readonly services: ServiceRepository,
    private readonly sessions: SessionRepository,
    private readonly grants: GrantRepository,
    private readonly vault: TokenVault,
    private readonly cipher: EnvelopeCipher,
    private readonly clock: Clock,
    private readonly events: EventLedger,
  ) {}

  /** Every configured service, with the caller's session or null (one query whatever the number of services). */
  async list(principal: Principal): Promise<SessionListItem[]> {
    const overview = await this.sessions.overview(principal.id, this.clock.now());
    return overview.map(({ service, session, dependentAgentCount }) => ({
      service: serviceView(service),
      session: session ? this.view(session, dependentAgentCount) : null,
    }));
  }

  async detail(principal: Principal, serviceId: string): Promise<SessionDetail> {
    const service = await this.service(serviceId);
    const session = await this.sessionOf(principal, service.id);
    const dependents = await this.dependents(principal, service.id);
    return {
      service: serviceView(service),
      session: this.view(session, dependents.length),
      dependent_agents: dependents,
    };
  }

  async affectedAgents(principal: Principal, serviceId: string): Promise<AgentRef[]> {
    const service = await this.service(serviceId);
    return this.dependents(principal, service.id);
  }

  /**
   * Deletes the stored tokens (not revoked at the provider); dependent agents see a missing
   * session. Its `session.disconnected` event in the deletion's transaction.
   */
  async terminate(principal: Principal, serviceId: string): Promise<TerminatedSession> {
    const service = await this.service(serviceId);
    const affected = await this.dependents(principal, service.id);
    const traceId = currentTraceId();
    const deleted = await this.sessions.delete(principal.id, service.id, (_session, manager) =>
      this.events.record(sessionDisconnected(principal.id, service.id, traceId), manager),
    );
    if (!deleted) throw new ApiError('not_found', `no session with service ${service.id}`);
    return { terminated: true, affected_agents: affected };
  }

  async forceRefresh(principal: Principal, serviceId: string): Promise<SessionView> {
    const service = await this.service(serviceId);
    // A refusal (TokenVaultError) is answered by the end-user API's vocabulary (common/error-vocabulary.ts).
    await this.vault.forceRefresh(principal.id, service.id);
    return this.view(
      await this.sessionOf(principal, service.id),
      (await this.dependents(principal, service.id)).length,
    );
  }

  private dependents(principal: Principal, serviceId: string): Promise<AgentRef[]> {
    return this.grants
      .agentsDelegatingService(principal.id, serviceId, this.clock.now())
      .then((agents) => agents.map((a) => ({ agent_id: a.agentId, display_name: a.displayName })));
  }

  private async service(id: string): Promise<Service> {
    const service = await this.services.findById(id);
    if (service === undefined) throw new ApiError('service not found', `no service ${id}`);
    return service;
  }

  private async sessionOf(principal: Principal, serviceId: string): Promise<ThirdPartySessionRecord> {
    const session = await this.sessions.find(principal.id, serviceId);
    if (session === undefined) throw new ApiError('not_found', `no session with service ${serviceId}`);
    return session;
  }

  private view(session: ThirdPartySessionRecord, dependentAgentCount: number): SessionView {
    const now = this.clock.nowMs();
    let encrypted = true;
    try {
      this.cipher.kekIdOf(session.accessTokenEnvelope);
    } catch {
      encrypted = false;
    }
    return {
      session_id: session.id,
      initiated_at: session.initiatedAt.toISOString(),
      access_token_expires_at: session.accessTokenExpiresAt?.toISOString() ?? null,
      refresh_token_expires_at: session.refreshTokenExpiresAt?.toISOString() ?? null,
      is_expired: session.accessTokenExpiresAt !== null && session.accessTokenExpiresAt.getTime() <= now,
      has_refresh_token: session.refreshTokenEnvelope !== null,
      needs_reauthentication: session.needsReauthentication === true,
      scope: [...session.scopes],
      dependent_agent_count: dependentAgentCount,
      is_encrypted: encrypted,
    };
  }
}

function serviceView(service: Pick<Service, 'id' | 'displayName' | 'logoUrl' | 'scopes'>): SessionServiceView {
  return {
    id: service.id,
    display_name: service.displayName,
    logo_url: service.logoUrl,
    scopes: service.scopes.map((s) => ({ scope: s.scope, description: s.description })),
  };
}
