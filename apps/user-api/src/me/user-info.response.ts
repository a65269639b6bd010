import type { Principal } from '@broker/domain';
import { ApiProperty } from '@nestjs/swagger';

export class UserInfo {
  principal!: string;
  /** The principal unless a display name is known. */
  display_name!: string;
  /** null unless a picture is known. */
  @ApiProperty({ type: String, format: 'uri', nullable: true })
  picture_url!: string | null;
}

/** Answer of `GET /api/me`. */
export class UserInfoResponse {
  data!: UserInfo;
}

export function toUserInfoResponse(principal: Principal): UserInfoResponse {
  return { data: { principal: principal.id, display_name: principal.id, picture_url: null } };
}
