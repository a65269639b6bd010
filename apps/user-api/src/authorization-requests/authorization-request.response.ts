import type { AuthorizationRequestRecord, AuthorizationRequestStatus } from '@broker/persistence';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import type { AuthorizationRequestDetails, AuthorizationRequestStep } from './authorization-requests.service';

// The contract's shapes (docs/authorization-requests.md): ids are UUIDs, times RFC 3339,
// an absent value is null, never omitted (docs/http-api.md).
const UUID: ApiPropertyOptions = { type: String, format: 'uuid' };
const TIME: ApiPropertyOptions = { type: String, format: 'date-time' };
const TIME_OR_NULL: ApiPropertyOptions = { type: String, format: 'date-time', nullable: true };
const STATUS: ApiPropertyOptions = { enum: ['pending', 'completed', 'denied', 'expired'] };
const TEXT_OR_NULL: ApiPropertyOptions = { type: String, nullable: true };

/** The agent or the service of a request, as the page names it. */
export class AuthorizationRequestParty {
  @ApiProperty(UUID)
  id!: string;
  display_name!: string;
  @ApiProperty(TEXT_OR_NULL)
  description!: string | null;
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  logo_url!: string | null;
}

/** One scope Allow delegates, with the service's description of it. */
export class AuthorizationRequestScope {
  scope!: string;
  description!: string;
}

/** An authorization request as its person sees it (docs/authorization-requests.md). */
export class AuthorizationRequestView {
  @ApiProperty(UUID)
  id!: string;
  @ApiProperty(STATUS)
  status!: AuthorizationRequestStatus;
  /** pending and not yet allowed: consent; allowed and the connection still needed: connect; otherwise done. */
  @ApiProperty({ enum: ['consent', 'connect', 'done'] })
  step!: AuthorizationRequestStep;
  agent!: AuthorizationRequestParty;
  service!: AuthorizationRequestParty;
  /** What Allow delegates for this service, in words (the service's scope descriptions). */
  @ApiProperty({ type: [AuthorizationRequestScope] })
  scopes!: AuthorizationRequestScope[];
  /** The request asks the person to allow something. */
  needs_grant!: boolean;
  /** The person must (re)connect the account. */
  needs_connection!: boolean;
  /** The agent already has an active grant of this person (Allow extends it, keeping its valid_until). */
  grant_exists!: boolean;
  @ApiProperty(TIME)
  created_at!: string;
  @ApiProperty(TIME)
  expires_at!: string;
  /** Seconds left by the broker's clock (0 when expired). */
  @ApiProperty({ type: 'integer', minimum: 0 })
  expires_in!: number;
  @ApiProperty(TIME_OR_NULL)
  answered_at!: string | null;
}

export class AuthorizationRequestResponse {
  data!: AuthorizationRequestView;
}

/** A request's state as its gateway waits on it. */
export class AuthorizationRequestStateView {
  @ApiProperty(UUID)
  id!: string;
  @ApiProperty(STATUS)
  status!: AuthorizationRequestStatus;
  @ApiProperty({ minLength: 1, maxLength: 200 })
  principal!: string;
  @ApiProperty(UUID)
  agent_id!: string;
  @ApiProperty(UUID)
  service_id!: string;
  /** The scopes the refused exchange asked for, sorted. */
  @ApiProperty({ type: [String] })
  scopes!: string[];
  @ApiProperty(TIME)
  created_at!: string;
  @ApiProperty(TIME)
  expires_at!: string;
  @ApiProperty(TIME_OR_NULL)
  answered_at!: string | null;
}

export class AuthorizationRequestStateResponse {
  data!: AuthorizationRequestStateView;
}

export function toAuthorizationRequestView(details: AuthorizationRequestDetails): AuthorizationRequestView {
  const { record, agent, service } = details;
  return {
    id: record.id,
    status: record.status,
    step: details.step,
    agent: { id: agent.id, display_name: agent.displayName, description: agent.description, logo_url: agent.logoUrl },
    service: {
      id: service.id,
      display_name: service.displayName,
      description: service.description,
      logo_url: service.logoUrl,
    },
    scopes: details.scopes.map((s) => ({ scope: s.scope, description: s.description })),
    needs_grant: record.needsGrant,
    needs_connection: record.needsConnection,
    grant_exists: details.grantExists,
    created_at: record.createdAt.toISOString(),
    expires_at: record.expiresAt.toISOString(),
    expires_in: details.expiresIn,
    answered_at: record.answeredAt?.toISOString() ?? null,
  };
}

export function toAuthorizationRequestState(record: AuthorizationRequestRecord): AuthorizationRequestStateView {
  return {
    id: record.id,
    status: record.status,
    principal: record.principal,
    agent_id: record.agentId,
    service_id: record.serviceId,
    scopes: [...record.scopes],
    created_at: record.createdAt.toISOString(),
    expires_at: record.expiresAt.toISOString(),
    answered_at: record.answeredAt?.toISOString() ?? null,
  };
}
