import { ApiProperty } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';

/** Body of `POST /api/authorization-requests/{id}/allow` (optional). */
export class AllowAuthorizationRequestDto {
  /**
   * The new grant's end, when the agent has no active grant of the person yet (an existing
   * grant keeps its own): RFC 3339 with a time zone, in the future; null or omitted: no end.
   */
  @ApiProperty({ type: String, format: 'date-time', nullable: true, required: false })
  @IsOptional()
  @IsString()
  valid_until?: string | null;
}
