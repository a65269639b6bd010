import type { AdminRole } from '@broker/auth';
import { ApiProperty } from '@nestjs/swagger';

/** Who the SSO proxy says is calling, and what they may do here. */
export class MeResponse {
  /** The principal from the proxy's principal header. */
  @ApiProperty({ example: 'alice@example.com' })
  principal!: string;
  /** `admin` may change everything; `viewer` sees everything and changes nothing (`server.admin.authorization`). */
  @ApiProperty({ enum: ['admin', 'viewer'], example: 'admin' })
  role!: AdminRole;
}
