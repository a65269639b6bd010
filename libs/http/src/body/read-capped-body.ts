import type { IncomingMessage } from 'node:http';
import { RequestBodyError } from '../errors/request-errors';

/**
 * The raw request body, refused past `limit` bytes (declared by `Content-Length` or
 * streamed) and refused when content-encoded, before anything parses it. On a refusal the
 * bytes read so far are dropped and the rest is left unread: the caller answers and then
 * closes the connection with {@link closeAfterRefusedBody}.
 */
export function readCappedBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = (): RequestBodyError =>
    new RequestBodyError('too_large', `the request body is larger than ${limit / 1024} KiB`);
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity')
    return Promise.reject(new RequestBodyError('unsupported_media_type', 'content-encoding is not supported'));
  if (Number(request.headers['content-length'] ?? 0) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        chunks = [];
        cleanup();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (): void => {
      cleanup();
      reject(new RequestBodyError('malformed', 'the request body could not be read'));
    };
    const cleanup = (): void => {
      request.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onError);
    };
    request.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onError);
  });
}
