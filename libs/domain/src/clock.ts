/**
 * The source of "now". Injected everywhere time matters (expiry, long-poll, rotation)
 * so tests can freeze or move it.
 */
export abstract class Clock {
  abstract now(): Date;

  /** Milliseconds since the epoch. */
  nowMs(): number {
    return this.now().getTime();
  }
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }

  override nowMs(): number {
    return Date.now();
  }
}
