/**
 * Holds a test provider's answers to refresh-token grants until the test releases them:
 * `arrived` resolves once the provider has handled a refresh whose answer is now held, so a
 * test can make something happen while a refresh is in flight (a reconnect, an exchange, a
 * sweep) and then let it finish.
 */
export class RefreshGate {
  private arrive!: () => void;
  private open!: () => void;
  /** Resolves once the provider has handled a refresh-token grant whose answer is now held. */
  readonly arrived = new Promise<void>((resolve) => (this.arrive = resolve));
  readonly released = new Promise<void>((resolve) => (this.open = resolve));

  /** Called by the provider's middleware: signals the arrival and waits for the release. */
  hold(): Promise<void> {
    this.arrive();
    return this.released;
  }

  release(): void {
    this.open();
  }
}
