import { ApprovalDecisions, ApprovalPages } from '@broker/approvals';
import { Principal } from '@broker/auth';
import { NoBody, ValidationVocabulary } from '@broker/http';
import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { inApprovalsVocabulary } from './approval-api-error';
import { parseApproveBody, parseScopePreviewBody } from './approval-bodies';
import { ApprovalIdParam } from './approval-id.param';
import {
  ApprovalListResponse,
  ApprovalResponse,
  ApprovedResponse,
  DeniedResponse,
  RevokedResponse,
  ScopePreviewResponse,
  toApprovalView,
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
// API.md "Tool approvals": validation failures are 400 `bad request`, for the body too.
@ValidationVocabulary('bad request')
export class ApprovalsController {
  constructor(
    private readonly decisions: ApprovalDecisions,
    private readonly pages: ApprovalPages,
  ) {}

  /** The caller's unexpired pending approvals, oldest first. */
  @Get('pending')
  @ApiOkResponse({ type: ApprovalListResponse })
  async pending(@Principal() principal: Principal): Promise<ApprovalListResponse> {
    return { data: (await this.decisions.pending(principal)).map((record) => toApprovalView(record, this.pages.url(record.id))) };
  }

  /** The caller's standing permanent approvals and denials, most recent first. */
  @Get('permanent')
  @ApiOkResponse({ type: ApprovalListResponse })
  async permanent(@Principal() principal: Principal): Promise<ApprovalListResponse> {
    return { data: (await this.decisions.permanent(principal)).map((record) => toApprovalView(record, this.pages.url(record.id))) };
  }

  @Get(':id')
  @ApiOkResponse({ type: ApprovalResponse })
  async get(@Principal() principal: Principal, @Param() { id }: ApprovalIdParam): Promise<ApprovalResponse> {
    const record = await inApprovalsVocabulary(this.decisions.get(principal, id));
    return { data: toApprovalView(record, this.pages.url(record.id)) };
  }

  @Post(':id/approve')
  @HttpCode(200)
  @ApiOkResponse({ type: ApprovedResponse })
  @ApiBody({ type: ApproveApprovalDto })
  async approve(@Principal() principal: Principal, @Param() { id }: ApprovalIdParam, @Body() body: unknown): Promise<ApprovedResponse> {
    return { data: toApprovedView(await inApprovalsVocabulary(this.decisions.approve(principal, id, parseApproveBody(body)))) };
  }

  /** What an approval with this pattern would cover; changes nothing. */
  @Post(':id/scope-preview')
  @HttpCode(200)
  @ApiOkResponse({ type: ScopePreviewResponse })
  @ApiBody({ type: ScopePreviewDto, required: false })
  async preview(@Principal() principal: Principal, @Param() { id }: ApprovalIdParam, @Body() body: unknown): Promise<ScopePreviewResponse> {
    return { data: toScopePreviewView(await inApprovalsVocabulary(this.decisions.preview(principal, id, parseScopePreviewBody(body)))) };
  }

  @Post(':id/deny')
  @HttpCode(200)
  @ApiOkResponse({ type: DeniedResponse })
  async deny(@Principal() principal: Principal, @Param() { id }: ApprovalIdParam, @Body() body: DenyApprovalDto): Promise<DeniedResponse> {
    return { data: toDeniedView(await inApprovalsVocabulary(this.decisions.deny(principal, id, body.persistence))) };
  }

  /** Revokes a permanent approval or denial; it leaves the gateways' sync state. */
  @Post(':id/revoke')
  @NoBody()
  @HttpCode(200)
  @ApiOkResponse({ type: RevokedResponse })
  async revoke(@Principal() principal: Principal, @Param() { id }: ApprovalIdParam): Promise<RevokedResponse> {
    return { data: toRevokedView(await inApprovalsVocabulary(this.decisions.revoke(principal, id))) };
  }
}
