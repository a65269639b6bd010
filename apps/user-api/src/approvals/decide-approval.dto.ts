import type { ApprovalPersistence } from '@broker/persistence';
import { Transform } from 'class-transformer';
import { IsDefined, IsIn, IsObject, IsOptional } from 'class-validator';

const AsSent = (): PropertyDecorator => Transform(({ obj, key }) => (obj as Record<string, unknown>)[key]);

/** Body of `POST /api/approvals/{id}/approve`. */
export class ApproveApprovalDto {
  @IsDefined()
  @IsIn(['once', 'session', 'permanent'])
  persistence!: ApprovalPersistence;

  /** Argument name → glob (README "Tool approvals"). Omitted: only the reviewed values. Not with `once`. */
  @IsOptional()
  @IsObject()
  @AsSent()
  params_pattern?: Record<string, unknown> | null;
}

/** Body of `POST /api/approvals/{id}/scope-preview`. */
export class ScopePreviewDto {
  /** Omitted: only the reviewed values; `{}`: every argument unconstrained. */
  @IsOptional()
  @IsObject()
  @AsSent()
  params_pattern?: Record<string, unknown> | null;
}

/** Body of `POST /api/approvals/{id}/deny` (optional). */
export class DenyApprovalDto {
  /** Only `permanent`; omitted: this request only. */
  @IsOptional()
  @IsIn(['permanent'])
  persistence?: 'permanent';
}
