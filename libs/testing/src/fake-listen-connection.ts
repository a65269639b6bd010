/** What a subscriber of the process's notification connection hears (as `ChannelSubscriber` in libs/persistence). */
interface Subscriber {
  notify(payload: string | undefined): void;
  resync(): void;
  lost(error: Error): void;
}

/**
 * The process's notification connection (`PostgresListenConnection`), driven by the test: who
 * subscribed, whether it listens, and what arrives. Pass it as the connection with
 * `as unknown as PostgresListenConnection`.
 */
export class FakeListenConnection {
  readonly subscribers = new Map<string, Subscriber[]>();
  /** Whether the connection is up; `deaf` channels are subscribed but not listened on. */
  listening = true;
  readonly deaf = new Set<string>();

  subscribe(channel: string, subscriber: Subscriber): Promise<() => Promise<void>> {
    this.subscribers.set(channel, [...(this.subscribers.get(channel) ?? []), subscriber]);
    return Promise.resolve(() => Promise.resolve());
  }

  isListening(channel: string): boolean {
    return this.listening && this.subscribers.has(channel) && !this.deaf.has(channel);
  }

  notify(channel: string, payload: string): void {
    for (const subscriber of this.subscribers.get(channel) ?? []) subscriber.notify(payload);
  }

  /** The connection failed: every subscriber is told. */
  lose(): void {
    this.listening = false;
    for (const subscriber of [...this.subscribers.values()].flat()) subscriber.lost(new Error('gone'));
  }

  /** The connection is back: every subscriber is told to resync. */
  resync(): void {
    this.listening = true;
    for (const subscriber of [...this.subscribers.values()].flat()) subscriber.resync();
  }
}
