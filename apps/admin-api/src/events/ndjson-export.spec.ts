import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import type { Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { writeNdjsonExport } from './ndjson-export';
import { type RecordedEvent } from '@broker/events';

/** 500 events of ~1 KiB: one page is far more than a socket or a response buffers, so every write waits for the client. */
function page(): RecordedEvent[] {
  return Array.from({ length: 500 }, () => ({
    seq: '1',
    id: randomUUID(),
    occurredAt: new Date('2026-05-01T00:00:00Z'),
    type: 'token.exchanged',
    actor: { type: 'gateway', id: 'gateway-1' },
    principal: 'ann@example.com',
    agentId: randomUUID(),
    serviceId: randomUUID(),
    outcome: 'success',
    traceId: null,
    details: { resource: `https://api.example.com/${'x'.repeat(900)}`, oauth_error: null },
  }));
}

/** The export's page reader: counts the pages read, knows when the export let go of it. */
class Pages implements AsyncIterator<RecordedEvent[]> {
  read = 0;
  returned = false;
  /** While set, the next page is read only when `resume` is called (a slow database). */
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  constructor(private readonly total: number) {}

  holdNext(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  resume(): void {
    this.open?.();
    this.gate = undefined;
  }

  async next(): Promise<IteratorResult<RecordedEvent[]>> {
    await this.gate;
    if (this.read === this.total) return { done: true, value: undefined };
    this.read += 1;
    return { done: false, value: page() };
  }

  return(): Promise<IteratorResult<RecordedEvent[]>> {
    this.returned = true;
    return Promise.resolve({ done: true, value: undefined });
  }
}

const until = async (condition: () => boolean): Promise<void> => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe('writeNdjsonExport when the client goes away', () => {
  const logger = new Logger('ndjson-export.spec');
  let server: Server | undefined;
  let client: Socket | undefined;

  afterEach(async () => {
    client?.destroy();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    server = undefined;
  });

  /**
   * A server whose `/slow` answers only when told, and whose `/export` streams `pages`; the
   * export's promise is `exported`. Returns the client's raw connection (it reads nothing).
   */
  async function serve(
    pages: Pages,
  ): Promise<{ started: Promise<void>; exported: Promise<void>; slow: Promise<ServerResponse>; socket: Socket }> {
    let exported!: Promise<void>;
    let started!: () => void;
    const exportStarted = new Promise<void>((resolve) => (started = resolve));
    let answerSlow!: (response: ServerResponse) => void;
    const slow = new Promise<ServerResponse>((resolve) => (answerSlow = resolve));
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      if (request.url === '/slow') return answerSlow(response);
      exported = writeNdjsonExport(response as unknown as Response, pages, 'events.ndjson', logger);
      started();
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => undefined);
    client = socket;
    return { started: exportStarted, exported: exportStarted.then(() => exported), slow, socket };
  }

  it('stops when the client closes while the export waits for it to take data', async () => {
    const pages = new Pages(1000);
    const { exported, socket } = await serve(pages);
    socket.write('GET /export HTTP/1.1\r\nhost: x\r\n\r\n');
    socket.pause();
    await until(() => pages.read >= 1);
    socket.destroy();
    await exported;
    expect(pages.returned).toBe(true);
    expect(pages.read).toBeLessThan(1000);
  }, 30_000);

  it('stops when the client closes while its export waits behind an earlier answer on the same connection', async () => {
    // HTTP/1.1 pipelining (RFC 9112 §9.3.2): the export's answer is queued until /slow's is sent, and buffers meanwhile.
    const pages = new Pages(1000);
    const { exported, slow, socket } = await serve(pages);
    socket.write('GET /slow HTTP/1.1\r\nhost: x\r\n\r\nGET /export HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => pages.read >= 1);
    socket.destroy();
    await exported;
    expect(pages.returned).toBe(true);
    expect(pages.read).toBeLessThan(1000);
    (await slow).end();
  }, 30_000);

  it('stops when the client closed while a page was being read, before the export waited for it', async () => {
    const pages = new Pages(1000);
    pages.holdNext();
    const { started, exported, slow, socket } = await serve(pages);
    socket.write('GET /slow HTTP/1.1\r\nhost: x\r\n\r\nGET /export HTTP/1.1\r\nhost: x\r\n\r\n');
    await started;
    // The client goes while the first page is read; the server has seen it (the connection's answer is closed).
    const answer = await slow;
    socket.destroy();
    await until(() => answer.destroyed);
    pages.resume();
    await exported;
    expect(pages.returned).toBe(true);
    expect(pages.read).toBeLessThanOrEqual(1);
  }, 30_000);
});
