/** How long a database-backed gauge reuses its last reading (one cheap COUNT per ~10 s, whatever the scrape rate). */
export const DATABASE_GAUGE_TTL_MS = 10_000;

/**
 * A number read from elsewhere (a database COUNT) at scrape time, reused for `ttlMs`;
 * concurrent scrapes share one read. A failed read keeps the last value (a scrape never
 * fails because the database is slow), and undefined until one succeeded.
 */
export class CachedReading {
  private value: number | undefined;
  private readAtMs = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<number | undefined> | undefined;
  private reader: (() => Promise<number>) | undefined;

  constructor(private readonly ttlMs = DATABASE_GAUGE_TTL_MS) {}

  /** Sets the read (called once at boot); a new reader forgets the cached value. */
  setReader(reader: () => Promise<number>): void {
    this.reader = reader;
    this.readAtMs = Number.NEGATIVE_INFINITY;
  }

  read(): Promise<number | undefined> {
    const reader = this.reader;
    if (reader === undefined || performance.now() - this.readAtMs < this.ttlMs) return Promise.resolve(this.value);
    this.inFlight ??= reader()
      .then(
        (value) => {
          this.value = value;
          this.readAtMs = performance.now();
          return value;
        },
        () => this.value,
      )
      .finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }
}
