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

  /** Repeatable; `session` approvals are listed only for these agent session ids. */
  @IsOptional()
  @Transform(({ value }: { value: unknown }): unknown[] => (Array.isArray(value) ? (value as unknown[]) : [value]))
  @IsString({ each: true })
  @Length(1, 255, { each: true })
  @IsPlainText({}, { each: true })
  agent_session_id?: string[];
}
