import type { ApprovalPersistence } from '@broker/domain';
import { IsIn, IsOptional } from 'class-validator';

/**
 * Body of `POST /api/approvals/{id}/approve`, for the OpenAPI contract (parsed by
 * `parseApproveBody`, so pattern keys stay exactly as sent).
 */
export class ApproveApprovalDto {
  /** once, session or permanent. */
  persistence!: ApprovalPersistence;

  /** Argument name → glob (README "Tool approvals"). Omitted: only the reviewed values. Not with `once`. */
  params_pattern?: Record<string, string> | null;
}

/** Body of `POST /api/approvals/{id}/scope-preview`, for the OpenAPI contract (parsed by `parseScopePreviewBody`). */
export class ScopePreviewDto {
  /** Omitted: only the reviewed values; `{}`: every argument unconstrained. */
  params_pattern?: Record<string, string> | null;
}

/** Body of `POST /api/approvals/{id}/deny` (optional). */
export class DenyApprovalDto {
  /** Only `permanent`; omitted: this request only. */
  @IsOptional()
  @IsIn(['permanent'])
  persistence?: 'permanent';
}
