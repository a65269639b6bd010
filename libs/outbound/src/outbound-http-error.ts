/**
 * Why an outbound call produced no usable answer:
 * - `forbidden_address`: the target is a special-use address (the policy's address guard);
 * - `unreachable`: no answer (DNS, connection refused or reset, TLS);
 * - `timeout`: no answer within the connect or total timeout;
 * - `redirect`: a 3xx, which is never followed;
 * - `status`: not the status the call requires (`getJson`: 200);
 * - `content_type`: a media type the policy does not allow;
 * - `too_large`: the answer passed the policy's size cap while it was read;
 * - `interrupted`: the answer broke off (or ran out of time) while it was read;
 * - `not_json`, `not_object`: `getJson`'s answer is not JSON, or not a JSON object.
 */
export type OutboundFailure =
  | 'forbidden_address'
  | 'unreachable'
  | 'timeout'
  | 'redirect'
  | 'status'
  | 'content_type'
  | 'too_large'
  | 'interrupted'
  | 'not_json'
  | 'not_object';

/**
 * An outbound call failed. `reason` is what callers branch on; `message` is detail for the
 * log (it names no secret and carries none of the answer's content), never for a client.
 */
export class OutboundHttpError extends Error {
  constructor(
    readonly reason: OutboundFailure,
    message: string,
    /** The answer's status, for `redirect` and `status`. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'OutboundHttpError';
  }
}
