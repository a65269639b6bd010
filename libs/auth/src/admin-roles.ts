import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Inject, Injectable } from '@nestjs/common';

/** What a principal may do on the admin server: everything, or read only. */
export type AdminRole = 'admin' | 'viewer';

/**
 * The admin server's roles from `server.admin.authorization` (docs/admin-api.md "Roles"):
 * a principal in `viewers` is a viewer (even when also in `admins`); with `admins` unset every
 * principal the proxy passes is an administrator, with it set only those listed are.
 */
@Injectable()
export class AdminRoles {
  private readonly admins: ReadonlySet<string> | undefined;
  private readonly viewers: ReadonlySet<string>;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig) {
    const { admins, viewers } = config.server.admin.authorization;
    this.admins = admins === undefined ? undefined : new Set(admins);
    this.viewers = new Set(viewers);
  }

  /** The principal's role, or undefined when it is not an administrator of this broker at all. */
  roleOf(principal: string): AdminRole | undefined {
    if (this.viewers.has(principal)) return 'viewer';
    if (this.admins === undefined || this.admins.has(principal)) return 'admin';
    return undefined;
  }
}
