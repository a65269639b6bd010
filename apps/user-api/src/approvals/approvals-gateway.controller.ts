import { ApprovalPages, ApprovalRequests, ApprovalSync } from '@broker/approvals';
import { ClientAuthenticated } from '@broker/auth';
import { NoBody, ValidationVocabulary } from '@broker/http';
import type { SubjectIdentity } from '@broker/oauth-server';
import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiHeader, ApiNotModifiedResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { inApprovalsVocabulary } from './approval-api-error';
import { parseCreateApprovalBody } from './approval-bodies';
import { ApprovalIdParam } from './approval-id.param';
import { ConsumedResponse, CreatedApprovalResponse, ApprovalSyncResponse, toConsumedView, toCreatedView } from './approval.response';
import { CreateApprovalDto } from './create-approval.dto';
import { Gateway, GatewayAuthGuard, GatewayOperation } from './gateway-auth.guard';
import { writeSyncAnswer } from './sync-answer';
import { SyncApprovalsQuery } from './sync-approvals.query';

/**
 * The gateways' side of tool approvals (API.md "Tool approvals"): they authenticate with
 * JWTs in headers, never the principal header. Create: subject token + client assertion;
 * consume: subject token; sync: client assertion. The guard verifies them first: nothing
 * of the request (path, query, body) is validated for an unauthenticated caller.
 */
@ApiTags('approvals')
@Controller('api/approvals')
@ClientAuthenticated()
@UseGuards(GatewayAuthGuard)
// API.md "Tool approvals": validation failures are 400 `bad request`, for the body too (gateways are written against it).
@ValidationVocabulary('bad request')
export class ApprovalsGatewayController {
  constructor(
    private readonly requests: ApprovalRequests,
    private readonly sync: ApprovalSync,
    private readonly pages: ApprovalPages,
  ) {}

  /** A pending approval for the subject token's user and agent: 201 new, 200 the pending duplicate. */
  @Post()
  @GatewayOperation('create')
  @ApiSecurity('BearerSubjectTokenClientAssertion')
  @ApiHeader({ name: 'X-Client-Assertion', required: true, description: 'the gateway\'s client assertion (JWT)' })
  @ApiHeader({ name: 'traceparent', required: false })
  @ApiCreatedResponse({ type: CreatedApprovalResponse })
  @ApiOkResponse({ type: CreatedApprovalResponse, description: 'the pending duplicate' })
  @ApiBody({ type: CreateApprovalDto })
  async create(@Gateway() gateway: SubjectIdentity, @Body() body: unknown, @Res({ passthrough: true }) response: Response): Promise<CreatedApprovalResponse> {
    const { record, created } = await inApprovalsVocabulary(this.requests.create(gateway, parseCreateApprovalBody(body)));
    response.status(created ? 201 : 200);
    return { data: toCreatedView(record, this.pages.url(record.id)) };
  }

  /** Every active approval grouped by (principal, agent); long-polls with `If-None-Match`. */
  @Get()
  @GatewayOperation('sync')
  @ApiSecurity('ClientAssertion')
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'the ETag of the state the gateway holds: wait for a change' })
  @ApiHeader({ name: 'X-Long-Poll-Timeout', required: false, description: 'seconds to wait, integer 1-120 (default approvals.sync.default_timeout)' })
  @ApiOkResponse({ type: ApprovalSyncResponse, description: 'the state, with ETag "v<N>"' })
  @ApiNotModifiedResponse({ description: 'nothing changed before the timeout' })
  async state(@Query() query: SyncApprovalsQuery, @Req() request: Request, @Res() response: Response): Promise<void> {
    const gone = new AbortController();
    response.once('close', () => gone.abort());
    const answer = await inApprovalsVocabulary(
      this.sync.sync({
        principal: query.principal,
        agentSessionIds: query.agent_session_id ?? [],
        ifNoneMatch: request.headers['if-none-match'],
        longPollTimeout: request.headers['x-long-poll-timeout'] as string | undefined,
        signal: gone.signal,
      }),
    );
    writeSyncAnswer(response, answer);
  }

  /** An approved one-time approval becomes consumed; idempotent. */
  @Post(':id/consume')
  @GatewayOperation('consume')
  @NoBody()
  @HttpCode(200)
  @ApiSecurity('BearerSubjectToken')
  @ApiOkResponse({ type: ConsumedResponse })
  async consume(@Gateway() gateway: SubjectIdentity, @Param() { id }: ApprovalIdParam): Promise<ConsumedResponse> {
    return { data: toConsumedView(await inApprovalsVocabulary(this.requests.consume(gateway, id))) };
  }
}
