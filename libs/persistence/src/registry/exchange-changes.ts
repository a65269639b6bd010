/** What `ExchangeChanges` needs of `ExchangeContextCache`. */
interface ExchangeContexts {
  invalidate(principal: string | undefined): void;
}

/** What `ExchangeChanges` needs of `TokenStateCache`. */
interface TokenStates {
  forgetPrincipal(principal: string | undefined): void;
}

/**
 * What this process keeps in memory of the token exchange's and introspection's rows
 * (`ExchangeContextCache`, `TokenStateCache`), told of the writes made through this process.
 * A repository writing grants, sessions, services or agents registers `forget` with its
 * transaction (`scope.afterCommit(() => exchangeChanges.forget(principal))`): once the write
 * has committed, this process's own next request reads the rows again, whatever the order in
 * which the write's answer and its `NOTIFY exchange_changed` arrive. Other replicas drop them
 * when the notification comes. Provided by `PersistenceModule` on the `Database`'s caches; on
 * PGlite neither cache exists and there is nothing to forget.
 */
export class ExchangeChanges {
  constructor(
    private readonly contexts?: ExchangeContexts,
    private readonly tokenState?: TokenStates,
  ) {}

  /** Drops what this process keeps for `principal`, everything when undefined (a service or agent changed). */
  forget(principal?: string): void {
    this.contexts?.invalidate(principal);
    this.tokenState?.forgetPrincipal(principal);
  }
}
