import {
  ApprovalPages,
  ApprovalRequests,
  ApprovalSync,
  MAX_LONG_POLL_SECONDS,
  MIN_LONG_POLL_SECONDS,
  type GatewayIdentity,
} from '@broker/approvals';
import { ClientAuthenticated } from '@broker/auth';
import { ApiErrors, NoBody, ValidationVocabulary } from '@broker/http';
import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiHeader,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiQuery,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { parseCreateApprovalBody } from './approval-bodies';
import { ApprovalIdParam } from './approval-id.param';
import {
  ConsumedResponse,
  CreatedApprovalResponse,
  ApprovalSyncResponse,
  toConsumedView,
  toCreatedView,
} from './approval.response';
import { CreateApprovalDto } from './create-approval.dto';
import { Gateway, GatewayAuthGuard, GatewayOperation } from './gateway-auth.guard';
import { SYNC_HEADERS, writeSyncAnswer } from './sync-answer';
import { AGENT_SESSION_ID_QUERY, SyncApprovalsQuery } from './sync-approvals.query';

/**
 * The gateways' side of tool approvals (docs/approvals.md): they authenticate with
 * JWTs in headers, never the principal header. Create: subject token + client assertion;
 * consume: subject token; sync: client assertion. The guard verifies them first: nothing
 * of the request (path, query, body) is validated for an unauthenticated caller.
 */
@ApiTags('approvals')
@Controller('api/approvals')
@ClientAuthenticated()
@UseGuards(GatewayAuthGuard)
// Validation failures are 400 `bad request`, for the body too (gateways are written against it).
@ValidationVocabulary('bad request')
export class ApprovalsGatewayController {
  constructor(
    private readonly requests: ApprovalRequests,
    private readonly sync: ApprovalSync,
    private readonly pages: ApprovalPages,
  ) {}

  /**
   * Requests the user's approval of a tool call. 201 with a new pending approval, 200 with
   * the pending duplicate (same user, agent, `tool_name` and `arguments_hash`). The gateway
   * sends the user's subject token as `Authorization: Bearer` and its own client assertion
   * in `X-Client-Assertion`; at most `approvals.rate_limit.max_pending_per_pair` pending and
   * `max_requests_per_minute` creations per minute for one user and agent (else 429).
   * Precedence: credentials (401, then 403 `forbidden` when the exchange's expression refuses
   * the gateway), the body (400), the agent (403 `forbidden` when unregistered), the user's
   * grant (403 `grant_required` when the user has no active grant for the agent: none,
   * revoked or expired), then the limits (429). A revoked grant ended its pending requests, so
   * a duplicate of one is refused too, never answered with the old record.
   */
  @Post()
  @GatewayOperation('create')
  @ApiSecurity('BearerSubjectTokenClientAssertion')
  @ApiHeader({
    name: 'X-Client-Assertion',
    required: true,
    description: "the gateway's client assertion (JWT), sent once",
  })
  @ApiHeader({
    name: 'traceparent',
    required: false,
    description: 'W3C Trace Context: the request id of the audit record',
  })
  @ApiCreatedResponse({ type: CreatedApprovalResponse, description: 'a new pending approval' })
  @ApiOkResponse({ type: CreatedApprovalResponse, description: 'the pending duplicate' })
  @ApiBody({ type: CreateApprovalDto })
  // 401: a credential missing or invalid; 403: the exchange's expression refuses the gateway, or the agent is not
  // registered (`forbidden`), or the user has no active grant for it (`grant_required`).
  @ApiErrors('bad request', 'unauthorized', 'forbidden', 'grant_required', 'rate_limited')
  async create(
    @Gateway() gateway: GatewayIdentity,
    @Body() body: unknown,
    @Res({ passthrough: true }) response: Response,
  ): Promise<CreatedApprovalResponse> {
    const { record, created } = await this.requests.create(gateway, parseCreateApprovalBody(body));
    response.status(created ? 201 : 200);
    return { data: toCreatedView(record, this.pages.url(record.id)) };
  }

  /**
   * Lists every active approval, grouped by user and agent. With `If-None-Match` naming the
   * current state it long-polls: it waits up to `X-Long-Poll-Timeout` seconds for a change,
   * then answers 304. The gateway authenticates with its client assertion alone, in
   * `X-Client-Assertion` or as `Authorization: Bearer`, authorized by
   * `approvals.sync.authorization.cel.expression` (else 403).
   */
  @Get()
  @GatewayOperation('sync')
  @ApiSecurity('ClientAssertion')
  @ApiQuery(AGENT_SESSION_ID_QUERY)
  @ApiHeader({
    name: 'If-None-Match',
    required: false,
    description: 'the ETag of the state the gateway holds (weak, a list or `*` match too): wait for a change',
  })
  @ApiHeader({
    name: 'X-Long-Poll-Timeout',
    required: false,
    description:
      'seconds to wait for a change when If-None-Match names the current state (default approvals.sync.default_timeout)',
    schema: { type: 'integer', minimum: MIN_LONG_POLL_SECONDS, maximum: MAX_LONG_POLL_SECONDS },
  })
  @ApiOkResponse({ type: ApprovalSyncResponse, description: 'the current state', headers: SYNC_HEADERS })
  @ApiNotModifiedResponse({
    description: 'nothing changed before the timeout (or the server is shutting down: `Connection: close`)',
    headers: SYNC_HEADERS,
  })
  @ApiErrors('bad request', 'unauthorized', 'forbidden')
  async state(@Query() query: SyncApprovalsQuery, @Req() request: Request, @Res() response: Response): Promise<void> {
    const gone = new AbortController();
    response.once('close', () => gone.abort());
    const answer = await this.sync.sync({
      principal: query.principal,
      agentSessionIds: query.agent_session_id ?? [],
      ifNoneMatch: request.headers['if-none-match'],
      longPollTimeout: request.headers['x-long-poll-timeout'] as string | undefined,
      signal: gone.signal,
    });
    writeSyncAnswer(response, answer);
  }

  /**
   * Consumes an approved one-time approval. Idempotent: consuming it again answers 200 with
   * the first consumption's time. The gateway sends only the user's subject token; an
   * approval of another user or agent is 403 `forbidden`, an approved `once` whose grant has
   * expired 403 `grant_required`, anything else but an approved `once` 422 `not_consumable`
   * (an approval ended with its revoked grant included).
   */
  @Post(':id/consume')
  @GatewayOperation('consume')
  @NoBody()
  @HttpCode(200)
  @ApiSecurity('BearerSubjectToken')
  @ApiOkResponse({ type: ConsumedResponse, description: 'consumed (now or before)' })
  @ApiErrors('unauthorized', 'forbidden', 'grant_required', 'not_found', 'gone', 'not_consumable')
  async consume(@Gateway() gateway: GatewayIdentity, @Param() { id }: ApprovalIdParam): Promise<ConsumedResponse> {
    return { data: toConsumedView(await this.requests.consume(gateway, id)) };
  }
}
