import { MAX_PATTERN_BYTES, MAX_PATTERN_ENTRIES } from '@broker/approvals';
import type { ApprovalPersistence } from '@broker/domain';
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { IsIn, ValidateIf } from 'class-validator';

/**
 * A `params_pattern` as a request sends it. null is accepted and means what omitting it
 * means (only the reviewed values): the approval record shows that scope as null too.
 * Entries that break the caps or do not cover the reviewed arguments are 422 `invalid_pattern`.
 */
const PATTERN_REQUEST: ApiPropertyOptions = {
  type: 'object',
  additionalProperties: {
    type: 'string',
    maxLength: MAX_PATTERN_BYTES,
    description: `a glob of at most ${MAX_PATTERN_BYTES} bytes (UTF-8)`,
  },
  maxProperties: MAX_PATTERN_ENTRIES,
  nullable: true,
};

/**
 * Body of `POST /api/approvals/{id}/approve`, for the OpenAPI contract (parsed by
 * `parseApproveBody`, so pattern keys stay exactly as sent).
 */
export class ApproveApprovalDto {
  /** once, session or permanent (`session` needs a request made with `metadata.agent_session_id`). */
  @ApiProperty({ enum: ['once', 'session', 'permanent'] })
  persistence!: ApprovalPersistence;

  /** Argument name → glob (docs/approvals.md). Omitted or null: only the reviewed values. Not with `once`. */
  @ApiPropertyOptional(PATTERN_REQUEST)
  params_pattern?: Record<string, string> | null;
}

/** Body of `POST /api/approvals/{id}/scope-preview`, for the OpenAPI contract (parsed by `parseScopePreviewBody`). */
export class ScopePreviewDto {
  /** Omitted or null: only the reviewed values; `{}`: every argument unconstrained. */
  @ApiPropertyOptional(PATTERN_REQUEST)
  params_pattern?: Record<string, string> | null;
}

/** Body of `POST /api/approvals/{id}/deny` (optional). */
export class DenyApprovalDto {
  /** Only `permanent`; omitted: this request only. null is refused (an enum, not free text). */
  @ValidateIf((_dto: unknown, value: unknown) => value !== undefined)
  @IsIn(['permanent'])
  persistence?: 'permanent';
}
