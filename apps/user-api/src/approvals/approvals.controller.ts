import { ApprovalDecisions, ApprovalPages } from '@broker/approvals';
import { Principal } from '@broker/auth';
import { Clock, type ApprovalRecord } from '@broker/domain';
import { ApiErrors, NoBody, ValidationVocabulary } from '@broker/http';
import { ProtectedResourceRepository } from '@broker/persistence';
import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { parseApproveBody, parseScopePreviewBody } from './approval-bodies';
import { ApprovalIdParam } from './approval-id.param';
import {
  ApprovalListResponse,
  ApprovalResponse,
  ApprovalView,
  ApprovedResponse,
  mcpServerUriOf,
  toApprovalView,
  DeniedResponse,
  RevokedResponse,
  ScopePreviewResponse,
  toApprovedView,
  toDeniedView,
  toRevokedView,
  toScopePreviewView,
} from './approval.response';
import { ApproveApprovalDto, DenyApprovalDto, ScopePreviewDto } from './decide-approval.dto';

/** The user's side of tool approvals (principal header, or the session cookie of the consent UI). */
@ApiTags('approvals')
@Controller('api/approvals')
@ApiSecurity('PrincipalHeader')
// Validation failures are 400 `bad request`, for the body too.
@ValidationVocabulary('bad request')
export class ApprovalsController {
  constructor(
    private readonly decisions: ApprovalDecisions,
    private readonly pages: ApprovalPages,
    private readonly resources: ProtectedResourceRepository,
    private readonly clock: Clock,
  ) {}

  /** The record as the API shows it, a backchannel request's MCP server named as registered. */
  private async view(record: ApprovalRecord): Promise<ApprovalView> {
    const uri = mcpServerUriOf(record);
    const server = uri === undefined ? undefined : await this.resources.byUri(uri, this.clock.nowMs());
    return toApprovalView(record, this.pages.url(record.id), server?.displayName ?? null);
  }

  /** Lists the caller's unexpired pending approvals, oldest first. */
  @Get('pending')
  @ApiOkResponse({ type: ApprovalListResponse })
  async pending(@Principal() principal: Principal): Promise<ApprovalListResponse> {
    return { data: await Promise.all((await this.decisions.pending(principal)).map((record) => this.view(record))) };
  }

  /** Lists the caller's standing permanent approvals and denials, most recent first. */
  @Get('permanent')
  @ApiOkResponse({ type: ApprovalListResponse })
  async permanent(@Principal() principal: Principal): Promise<ApprovalListResponse> {
    return {
      data: await Promise.all((await this.decisions.permanent(principal)).map((record) => this.view(record))),
    };
  }

  /**
   * Reads one of the caller's approvals. Another user's approval is 404 like an unknown one
   * (no existence leak); a pending approval past `approvals.pending_ttl` is 410.
   */
  @Get(':id')
  @ApiOkResponse({ type: ApprovalResponse })
  @ApiErrors('not_found', 'gone')
  async get(@Principal() principal: Principal, @Param() { id }: ApprovalIdParam): Promise<ApprovalResponse> {
    const record = await this.decisions.get(principal, id);
    return { data: await this.view(record) };
  }

  /**
   * Approves a pending approval, once, for the agent session or permanently. A
   * `params_pattern` widens a `session` or `permanent` approval beyond the reviewed values;
   * it must cover them (else 422 `invalid_pattern`, as with `once`). Only a pending approval
   * can be decided (409).
   */
  @Post(':id/approve')
  @HttpCode(200)
  @ApiOkResponse({ type: ApprovedResponse })
  @ApiBody({ type: ApproveApprovalDto })
  @ApiErrors('bad request', 'not_found', 'conflict', 'gone', 'invalid_pattern')
  async approve(
    @Principal() principal: Principal,
    @Param() { id }: ApprovalIdParam,
    @Body() body: unknown,
  ): Promise<ApprovedResponse> {
    return {
      data: toApprovedView(await this.decisions.approve(principal, id, parseApproveBody(body))),
    };
  }

  /**
   * Previews what a permanent approval with this pattern would cover. Changes nothing, and
   * refuses what approve would refuse.
   */
  @Post(':id/scope-preview')
  @HttpCode(200)
  @ApiOkResponse({ type: ScopePreviewResponse })
  @ApiBody({ type: ScopePreviewDto, required: false })
  @ApiErrors('bad request', 'not_found', 'conflict', 'gone', 'invalid_pattern')
  async preview(
    @Principal() principal: Principal,
    @Param() { id }: ApprovalIdParam,
    @Body() body: unknown,
  ): Promise<ScopePreviewResponse> {
    return {
      data: toScopePreviewView(await this.decisions.preview(principal, id, parseScopePreviewBody(body))),
    };
  }

  /**
   * Denies a pending approval, for this request only or permanently. A permanent denial
   * stands until revoked; a one-time denial leaves the gateways' sync state after
   * `approvals.pending_ttl`.
   */
  @Post(':id/deny')
  @HttpCode(200)
  @ApiOkResponse({ type: DeniedResponse })
  @ApiBody({ type: DenyApprovalDto, required: false })
  @ApiErrors('bad request', 'not_found', 'conflict', 'gone')
  async deny(
    @Principal() principal: Principal,
    @Param() { id }: ApprovalIdParam,
    @Body() body: DenyApprovalDto,
  ): Promise<DeniedResponse> {
    return { data: toDeniedView(await this.decisions.deny(principal, id, body.persistence)) };
  }

  /**
   * Revokes a permanent approval or denial. It leaves the gateways' sync state; revoking it
   * again answers the first revocation.
   */
  @Post(':id/revoke')
  @NoBody()
  @HttpCode(200)
  @ApiOkResponse({ type: RevokedResponse })
  @ApiErrors('not_found', 'gone', 'not_revocable')
  async revoke(@Principal() principal: Principal, @Param() { id }: ApprovalIdParam): Promise<RevokedResponse> {
    return { data: toRevokedView(await this.decisions.revoke(principal, id)) };
  }
}
