import { connect, type Socket } from 'node:net';
import { ApiClient, http, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

const KiB = 1024;
const MiB = 1024 * KiB;
const PIECE = Buffer.alloc(64 * KiB, 'a');

type Framing = 'chunked' | 'declared';

/**
 * How the client treats its own request: `reads after sending` writes the whole body before
 * it reads anything (its socket is paused, like a blocking client), so an answer sent
 * early waits unread; `reads while sending` writes the whole body as fast as it can while
 * reading whatever arrives (like an HTTP client library); `waits mid-body` sends 512 KiB,
 * waits for the answer, then sends the rest; `stops mid-body` sends 512 KiB, reads the
 * answer and sends nothing more.
 */
type Behaviour = 'reads after sending' | 'reads while sending' | 'waits mid-body' | 'stops mid-body';

interface Exchange {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The first socket error the client met (EPIPE, ECONNRESET), if any. */
  readonly error?: string;
  /** Whether the server closed the connection (instead of the client giving up). */
  readonly closedByServer: boolean;
  readonly bodyBytesSent: number;
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A complete HTTP/1.1 answer from the bytes received so far, or undefined. */
function parseAnswer(received: Buffer): Answer | undefined {
  const split = received.indexOf('\r\n\r\n');
  if (split < 0) return undefined;
  const [statusLine = '', ...lines] = received.subarray(0, split).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = received.subarray(split + 4);
  if (body.length < Number(headers['content-length'] ?? Infinity)) return undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') };
}

/**
 * Sends `POST path` with a form body of `bodyBytes` in 64 KiB writes over a raw socket, each
 * write after the previous one left the client. Resolves once the connection is closed
 * (by the server, or by the client after `timeoutMs`), with what the client received.
 */
function exchange(
  port: number,
  path: string,
  options: { framing: Framing; behaviour: Behaviour; bodyBytes: number; timeoutMs?: number },
): Promise<Exchange> {
  const { framing, behaviour, bodyBytes, timeoutMs = 10_000 } = options;
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let error: string | undefined;
    let sent = 0;
    let closedByServer = true;
    let answered: () => void = () => undefined;
    const answer = new Promise<void>((resolveAnswer) => (answered = resolveAnswer));
    const giveUp = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, timeoutMs);
    if (behaviour === 'reads after sending') socket.pause();
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      if (parseAnswer(Buffer.concat(received)) !== undefined) answered();
    });
    socket.on('error', (failure: NodeJS.ErrnoException) => (error ??= failure.code ?? failure.message));
    socket.on('close', () => {
      clearTimeout(giveUp);
      answered();
      const parsed = parseAnswer(Buffer.concat(received));
      resolve({
        status: parsed?.status ?? 0,
        headers: parsed?.headers ?? {},
        body: parsed?.body ?? '',
        error,
        closedByServer,
        bodyBytesSent: sent,
      });
    });
    const write = (data: string | Buffer): Promise<boolean> =>
      new Promise((done) => (socket.destroyed ? done(false) : socket.write(data, (failure) => done(failure == null))));
    const send = async (): Promise<void> => {
      const framingHeader = framing === 'chunked' ? 'transfer-encoding: chunked' : `content-length: ${bodyBytes}`;
      if (
        !(await write(
          `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/x-www-form-urlencoded\r\n${framingHeader}\r\n\r\n`,
        ))
      )
        return;
      while (sent < bodyBytes) {
        if ((behaviour === 'waits mid-body' || behaviour === 'stops mid-body') && sent === 512 * KiB) {
          await answer;
          if (behaviour === 'stops mid-body') return;
        }
        const piece = PIECE.subarray(0, Math.min(PIECE.length, bodyBytes - sent));
        if (
          !(await write(
            framing === 'chunked'
              ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
              : piece,
          ))
        )
          return;
        sent += piece.length;
      }
      if (framing === 'chunked' && !(await write('0\r\n\r\n'))) return;
      socket.resume();
    };
    void send();
  });
}

/**
 * docs/security.md: a token request body over 256 KiB is answered 400 invalid_request. The
 * answer goes first, with `Connection: close`; the rest of the body is read and discarded
 * for a bounded time (a lingering close, RFC 9112 §9.6) before the connection closes, so a
 * client that is still sending gets the answer rather than a reset.
 */
describe('token endpoint body limit', () => {
  let broker: TestBroker;
  let port: number;

  beforeAll(async () => {
    broker = await startTestBroker({ servers: BOTH_SERVERS });
    port = Number(new URL(broker.url('enduser')).port);
  });
  afterAll(() => broker.stop());

  const routes = [
    { route: 'hot route', path: '/oauth2/token' },
    { route: 'ordinary route', path: '/oauth2/token?x=1' },
  ] as const;
  const cases = routes.flatMap(({ route, path }) =>
    (['chunked', 'declared'] as const).flatMap((framing) =>
      (['reads after sending', 'waits mid-body'] as const).map((behaviour) => ({ route, path, framing, behaviour })),
    ),
  );

  it.each(cases)(
    'answers a 4 MiB $framing body on the $route with 400 invalid_request and Connection: close, without a reset, to a client that $behaviour',
    async ({ path, framing, behaviour }) => {
      const result = await exchange(port, path, { framing, behaviour, bodyBytes: 4 * MiB });
      expect(result.error).toBeUndefined();
      expect(result.status, result.body).toBe(400);
      expect((JSON.parse(result.body) as { error: string }).error).toBe('invalid_request');
      expect(result.headers['connection']).toBe('close');
      expect(result.headers['cache-control']).toBe('no-store');
      expect(result.bodyBytesSent).toBe(4 * MiB);
      expect(result.closedByServer).toBe(true);
    },
  );

  it.each(routes)(
    'closes the connection on the $route after a short linger when the client stops sending a refused body',
    async ({ path }) => {
      const started = Date.now();
      const result = await exchange(port, path, {
        framing: 'chunked',
        behaviour: 'stops mid-body',
        bodyBytes: 2 * MiB,
        timeoutMs: 15_000,
      });
      expect(result.status).toBe(400);
      expect(result.closedByServer).toBe(true);
      expect(Date.now() - started).toBeLessThan(10_000);
    },
  );

  // A client streaming a large body at loopback speed passed the old 8 MiB discard bound in a
  // few milliseconds and was reset before it read the answer (write ECONNRESET, no status).
  it.each(
    routes.flatMap(({ route, path }) =>
      (['reads after sending', 'reads while sending'] as const).map((behaviour) => ({ route, path, behaviour })),
    ),
  )(
    'answers a 64 MiB chunked body streamed at full speed on the $route with 400 invalid_request, without a reset, to a client that $behaviour',
    async ({ path, behaviour }) => {
      const result = await exchange(port, path, {
        framing: 'chunked',
        behaviour,
        bodyBytes: 64 * MiB,
        timeoutMs: 30_000,
      });
      expect(result.error).toBeUndefined();
      expect(result.status, result.body).toBe(400);
      expect(JSON.parse(result.body)).toEqual({
        error: 'invalid_request',
        error_description: 'the request body is larger than 256 KiB',
      });
      expect(result.headers['connection']).toBe('close');
      expect(result.bodyBytesSent).toBe(64 * MiB);
      expect(result.closedByServer).toBe(true);
    },
  );

  it.each(routes)(
    'disconnects a client that never stops sending a refused body on the $route after the linger, answering /health and token requests meanwhile',
    async ({ path }) => {
      const admin = new ApiClient(broker.url('admin'));
      const agentId = (await admin.post('/api/agents', { display_name: 'Draining neighbour' })).json<{ id: string }>()
        .id;
      const secret = (await admin.post(`/api/agents/${agentId}/client-credentials`)).json<{ client_secret: string }>()
        .client_secret;
      const endless = exchange(port, path, {
        framing: 'chunked',
        behaviour: 'reads while sending',
        bodyBytes: Infinity,
        timeoutMs: 60_000,
      });
      let settled = false;
      void endless.then(() => (settled = true));
      // While the refused body is read and discarded (still, when both have answered), the server answers others.
      const [health, token] = await Promise.all([
        http(`${broker.url('enduser')}/health`),
        http(`${broker.url('enduser')}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: agentId,
            client_secret: secret,
          }).toString(),
        }),
      ]);
      expect(settled).toBe(false);
      expect(health.status).toBe(200);
      expect(token.status, token.text).toBe(200);
      const result = await endless;
      expect(result.status).toBe(400);
      expect((JSON.parse(result.body) as { error: string }).error).toBe('invalid_request');
      // The server, not the client's 60 s patience, ended it: a sender that never stops is cut.
      expect(result.closedByServer).toBe(true);
      expect(result.error).toMatch(/^(EPIPE|ECONNRESET)$/);
    },
  );
});
