import { Clock } from '@broker/domain';

/** A clock that stands still until a test moves it. */
export class FrozenClock extends Clock {
  private current: number;

  constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
    super();
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  advance(ms: number): void {
    this.current += ms;
  }

  set(to: Date | string): void {
    this.current = new Date(to).getTime();
  }
}
