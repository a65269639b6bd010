import { IsPlainText } from '@broker/http';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Length } from 'class-validator';

/** Query of `GET /api/approvals` (the gateways' sync). */
export class SyncApprovalsQuery {
  /** Only this principal's approvals; omitted: every principal's. */
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @IsPlainText()
  principal?: string;

  /** Repeatable; `session` approvals are listed only for these agent session ids (see {@link AGENT_SESSION_ID_QUERY}). */
  @IsOptional()
  @Transform(({ value }: { value: unknown }): unknown[] => (Array.isArray(value) ? (value as unknown[]) : [value]))
  @IsString({ each: true })
  @Length(1, 255, { each: true })
  @IsPlainText({}, { each: true })
  agent_session_id?: string[];
}

/**
 * `agent_session_id` as the OpenAPI contract states it, declared on the route: the swagger
 * plugin would put `@Length(..., { each: true })` on the list instead of on each value.
 * At most 100 values (`ApprovalSync`), each 1-255 characters.
 */
export const AGENT_SESSION_ID_QUERY = {
  name: 'agent_session_id',
  required: false,
  description:
    'Repeatable (`?agent_session_id=a&agent_session_id=b`, at most 100 distinct values); `session` approvals are listed only for these agent session ids.',
  schema: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 255 }, maxItems: 100 },
  style: 'form',
  explode: true,
} as const;
