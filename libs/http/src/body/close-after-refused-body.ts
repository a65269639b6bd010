import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long the rest of a refused body is still read, and how much of it, before the connection is cut. */
export interface RefusedBodyDrain {
  /** Bytes read and discarded after the refusal before the socket is destroyed. */
  readonly maxBytes: number;
  /** Milliseconds after the refusal before the socket is destroyed. */
  readonly lingerMs: number;
}

/** 8 MiB more or two seconds, whichever comes first: enough for a client to finish a sizeable write and read the answer. */
export const REFUSED_BODY_DRAIN: RefusedBodyDrain = { maxBytes: 8 * 1024 * 1024, lingerMs: 2000 };

type EndArguments = [chunk?: unknown, encoding?: unknown, callback?: unknown];

/**
 * Closes the connection of a request whose body was refused unread (too large, encoded)
 * so that the answer reaches a client that is still sending. Call it before the answer
 * is written: the answer gets `Connection: close` and goes out at once, but its end is
 * held back while the rest of the body is read and discarded, until the body ends,
 * `drain.maxBytes` more have arrived or `drain.lingerMs` have passed. Only then is the
 * response ended (Node closes the connection), and past the bound or the linger the
 * socket is destroyed.
 *
 * Why not close at once: a socket closed with unread bytes, or receiving more, is reset
 * (TCP RST); the client's next write fails with EPIPE and its unread answer is dropped.
 */
export function closeAfterRefusedBody(request: IncomingMessage, response: ServerResponse, drain: RefusedBodyDrain = REFUSED_BODY_DRAIN): void {
  if (!response.headersSent) response.setHeader('Connection', 'close');
  if (request.complete || request.destroyed) return;

  const end = response.end.bind(response) as (...args: EndArguments) => ServerResponse;
  let outcome: 'draining' | 'ended' | 'cut' = 'draining';
  let held: { callback?: () => void } | undefined;
  let discarded = 0;

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
    clearTimeout(linger);
    request.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
    release();
  };
  const onData = (chunk: Buffer): void => {
    // Counted and dropped: nothing of a refused body is kept.
    discarded += chunk.length;
    if (discarded > drain.maxBytes) stop('cut');
  };
  const onEnd = (): void => stop('ended');
  const onGone = (): void => stop('cut');
  const linger = setTimeout(() => stop('cut'), drain.lingerMs);
  linger.unref();

  response.end = ((...args: EndArguments): ServerResponse => {
    let [chunk, encoding, callback] = args;
    if (typeof chunk === 'function') [chunk, callback] = [undefined, chunk];
    if (typeof encoding === 'function') [encoding, callback] = [undefined, encoding];
    // The answer itself goes out now; only the end of the message waits for the drain.
    if (chunk !== undefined && chunk !== null) response.write(chunk, (encoding as BufferEncoding | undefined) ?? 'utf8');
    held = { callback: callback as (() => void) | undefined };
    release();
    return response;
  }) as ServerResponse['end'];

  request.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  request.resume();
}
