import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Inject, Injectable } from '@nestjs/common';

/** Where the user decides an approval: `<consent_ui_url>/approvals/<id>` (docs/console.md). */
@Injectable()
export class ApprovalPages {
  private readonly base: string;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig) {
    this.base = config.server.enduser.consent_ui_url;
  }

  url(id: string): string {
    return `${this.base}/approvals/${id}`;
  }
}
