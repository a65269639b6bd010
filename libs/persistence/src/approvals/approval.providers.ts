import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import type { Provider } from '@nestjs/common';
import { Database } from '../database';
import { ApprovalChangeFeed, PgliteApprovalChangeFeed, PostgresApprovalChangeFeed } from './approval-change-feed';
import { ApprovalRepository } from './approval.repository';

/**
 * The approvals store and its change feed on the process's database. The feed is only
 * built here; it connects when the approvals sync starts it (the end-user server), so the
 * admin server holds no LISTEN connection.
 */
export const APPROVAL_PROVIDERS: Provider[] = [
  ApprovalRepository,
  {
    provide: ApprovalChangeFeed,
    inject: [Database, BROKER_CONFIG],
    useFactory: (database: Database, config: BrokerConfig): ApprovalChangeFeed => {
      // Replicas share PostgreSQL: the process's one LISTEN connection hears theirs too.
      if (database.notifications !== undefined) return new PostgresApprovalChangeFeed(database.notifications);
      return new PgliteApprovalChangeFeed(config.storage.pglite.data_dir);
    },
  },
];

export const APPROVAL_TOKENS = [ApprovalRepository, ApprovalChangeFeed];
