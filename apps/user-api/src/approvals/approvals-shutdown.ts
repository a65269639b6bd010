import { ApprovalSync } from '@broker/approvals';
import { Lifecycle } from '@broker/http';
import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';

/**
 * On SIGTERM/SIGINT held long-polls are answered at once (304, connection closing), so the
 * drain of in-flight requests is not held up by them for up to 120 s.
 */
@Injectable()
export class ApprovalsShutdown implements OnModuleInit, OnModuleDestroy {
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly lifecycle: Lifecycle,
    private readonly sync: ApprovalSync,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.lifecycle.onShutdown(() => this.sync.releaseWaiters());
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }
}
