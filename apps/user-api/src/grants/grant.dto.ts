import { IsDefined, IsOptional, IsString } from 'class-validator';

/** Body of `POST /api/consent/agents/{agent_id}/grants`. */
export class GrantDto {
  /** Permission-set id → array of service ids; `{}` or `[]` deletes the grant. */
  @IsDefined()
  granted_permission_sets!: unknown;

  /** RFC 3339, in the future; null or omitted: indefinite. */
  @IsOptional()
  @IsString()
  valid_until?: string | null;
}
