import type { DestinationStream } from 'pino';

/** Captures the broker's log lines (a pino destination) so tests can search them. */
export class LogCapture implements DestinationStream {
  readonly lines: string[] = [];

  write(line: string): void {
    this.lines.push(line);
  }

  get text(): string {
    return this.lines.join('');
  }

  records(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** The values from `secrets` that appear anywhere in the captured output. */
  leaked(secrets: readonly string[]): string[] {
    const text = this.text;
    return secrets.filter((secret) => secret.length > 0 && text.includes(secret));
  }
}
