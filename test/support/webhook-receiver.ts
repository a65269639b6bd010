import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got. */
export interface ReceivedHook {
  readonly eventId: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** How it ended: answered with a status, or given up by the broker (connection closed) first. */
  ended: 'open' | 'answered' | 'aborted';
}

/**
 * A webhook receiver on loopback that can hang: while `holding`, requests are kept open
 * (unanswered) until `release`; otherwise each gets the next queued status (200 when none is
 * queued) at once. It keeps which requests are open right now, the most open at once, and
 * every request that arrived while another one for the same event (`webhook-id`) was still
 * open (two attempts of one delivery at the same time).
 */
export class HangingReceiver {
  readonly received: ReceivedHook[] = [];
  /** Statuses for the next answers, in order. */
  readonly answers: number[] = [];
  /** Event ids that arrived while an earlier request for the same event was still open. */
  readonly overlaps: string[] = [];
  holding = false;
  maxOpen = 0;
  private readonly held: Array<{ hook: ReceivedHook; response: ServerResponse }> = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<HangingReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new HangingReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const hook: ReceivedHook = {
          eventId: String(request.headers['webhook-id']),
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          ended: 'open',
        };
        if (receiver.open.some((other) => other.eventId === hook.eventId)) receiver.overlaps.push(hook.eventId);
        receiver.received.push(hook);
        receiver.maxOpen = Math.max(receiver.maxOpen, receiver.open.length);
        response.on('close', () => {
          if (hook.ended === 'open') hook.ended = response.writableFinished ? 'answered' : 'aborted';
        });
        if (receiver.holding) receiver.held.push({ hook, response });
        else receiver.answer(hook, response, receiver.answers.shift() ?? 200);
      });
    });
    return receiver;
  }

  /** Requests not answered (nor given up) yet. */
  get open(): ReceivedHook[] {
    return this.received.filter((hook) => hook.ended === 'open');
  }

  forEvent(eventId: string): ReceivedHook[] {
    return this.received.filter((hook) => hook.eventId === eventId);
  }

  /** Answers every request held so far with `status`. */
  release(status = 200): void {
    for (const { hook, response } of this.held.splice(0)) this.answer(hook, response, status);
  }

  close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(hook: ReceivedHook, response: ServerResponse, status: number): void {
    if (response.destroyed) return;
    response.writeHead(status, { 'content-type': 'text/plain' }).end('ok', () => {
      if (hook.ended === 'open') hook.ended = 'answered';
    });
  }
}
