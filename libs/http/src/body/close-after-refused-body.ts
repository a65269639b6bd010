import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long the rest of a refused body is still read and discarded before the connection is cut. */
export interface RefusedBodyDrain {
  /** Milliseconds after the refusal before the socket is destroyed, however fast the client still sends. */
  readonly lingerMs: number;
  /** Milliseconds without a byte from the client before the socket is destroyed. */
  readonly idleMs: number;
  /**
   * Connections of this process lingering at once; a refusal past it is closed at once, as
   * before lingering existed (its client may see a reset instead of the answer).
   */
  readonly maxConcurrent: number;
}

/**
 * A lingering close (RFC 9112 §9.6) bounded by time only, as web servers bound theirs: at
 * most five seconds, or two without a byte. No byte count cuts it short: a client streaming
 * at loopback or LAN speed sends tens of MiB in that time (64 MiB in well under a second on
 * loopback) and must be able to finish its write and read the answer, which an early cut
 * destroys. A client that never stops sending is cut after five seconds, so a draining
 * connection costs a bounded time, and the bytes it reads are dropped as they arrive.
 * Reading costs CPU while a client sends, so at most 32 connections linger at once: a flood
 * of oversized bodies gets answers cut short, never a process busy draining for them.
 */
export const REFUSED_BODY_DRAIN: RefusedBodyDrain = { lingerMs: 5000, idleMs: 2000, maxConcurrent: 32 };

/** Connections lingering now (this process); bounded by `RefusedBodyDrain.maxConcurrent`. */
let lingering = 0;

type EndArguments = [chunk?: unknown, encoding?: unknown, callback?: unknown];

/**
 * Closes the connection of a request whose body was refused unread (too large, encoded)
 * so that the answer reaches a client that is still sending. Call it before the answer
 * is written: the answer gets `Connection: close` and goes out at once, but its end is
 * held back while the rest of the body is read (never paused) and discarded chunk by chunk,
 * until the body ends, `drain.lingerMs` have passed or the client has been silent for
 * `drain.idleMs`. Only then is the response ended (Node closes the connection), and past
 * the linger or the silence the socket is destroyed.
 *
 * Why not close at once, or after a number of bytes: a socket closed with unread bytes, or
 * receiving more, is reset (TCP RST); the client's next write fails with EPIPE or
 * ECONNRESET and its unread answer is dropped (RFC 9112 §9.6).
 */
export function closeAfterRefusedBody(
  request: IncomingMessage,
  response: ServerResponse,
  drain: RefusedBodyDrain = REFUSED_BODY_DRAIN,
): void {
  if (!response.headersSent) response.setHeader('Connection', 'close');
  if (request.complete || request.destroyed) return;
  if (lingering >= drain.maxConcurrent) return;
  lingering += 1;

  const end = response.end.bind(response) as (...args: EndArguments) => ServerResponse;
  let outcome: 'draining' | 'ended' | 'cut' = 'draining';
  let held: { callback?: () => void } | undefined;

  // The answer has been written and the drain is over: end the message (Node then closes
  // the connection, as the answer says); past the bound or the linger, cut it.
  const release = (): void => {
    if (held === undefined || outcome === 'draining') return;
    response.end = end as ServerResponse['end'];
    const { callback } = held;
    if (response.destroyed) return;
    end(() => {
      if (outcome === 'cut') request.socket.destroy();
      callback?.();
    });
  };
  const stop = (reason: 'ended' | 'cut'): void => {
    if (outcome !== 'draining') return;
    outcome = reason;
    lingering -= 1;
    clearTimeout(linger);
    clearTimeout(idle);
    request.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
    release();
  };
  // Dropped as it arrives: nothing of a refused body is kept or parsed.
  const onData = (): void => {
    idle.refresh();
  };
  const onEnd = (): void => stop('ended');
  const onGone = (): void => stop('cut');
  const linger = setTimeout(() => stop('cut'), drain.lingerMs);
  linger.unref();
  const idle = setTimeout(() => stop('cut'), drain.idleMs);
  idle.unref();

  response.end = ((...args: EndArguments): ServerResponse => {
    let [chunk, encoding, callback] = args;
    if (typeof chunk === 'function') [chunk, callback] = [undefined, chunk];
    if (typeof encoding === 'function') [encoding, callback] = [undefined, encoding];
    // The answer itself goes out now; only the end of the message waits for the drain.
    if (chunk !== undefined && chunk !== null)
      response.write(chunk, (encoding as BufferEncoding | undefined) ?? 'utf8');
    held = { callback: callback as (() => void) | undefined };
    release();
    return response;
  }) as ServerResponse['end'];

  request.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  request.resume();
}
