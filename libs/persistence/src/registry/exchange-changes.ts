import { Injectable, Optional } from '@nestjs/common';
import { ExchangeContextCache } from './exchange-context-cache';
import { TokenStateCache } from './token-state-cache';

/**
 * What this process keeps in memory of the token exchange's and introspection's rows
 * (`ExchangeContextCache`, `TokenStateCache`), told of the writes made through this process.
 * A repository writing grants, sessions, services or agents registers `forget` with its
 * transaction (`scope.afterCommit(() => exchangeChanges.forget(principal))`): once the write
 * has committed, this process's own next request reads the rows again, whatever the order in
 * which the write's answer and its `NOTIFY exchange_changed` arrive. Other replicas drop them
 * when the notification comes. On PGlite neither cache exists and there is nothing to forget.
 */
@Injectable()
export class ExchangeChanges {
  constructor(
    @Optional() private readonly contexts?: ExchangeContextCache,
    @Optional() private readonly tokenState?: TokenStateCache,
  ) {}

  /** Drops what this process keeps for `principal`, everything when undefined (a service or agent changed). */
  forget(principal?: string): void {
    this.contexts?.invalidate(principal);
    this.tokenState?.forgetPrincipal(principal);
  }
}
