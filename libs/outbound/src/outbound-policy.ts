import type { LookupAddress } from 'node:dns';
import type { BlockList } from 'node:net';

/** A resolver with the shape of `dns.lookup(hostname, { all: true }, callback)`. */
export type Resolver = (
  hostname: string,
  options: { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * The SSRF rules, for targets that someone outside the broker chose (a client metadata
 * document URL, an issuer an admin typed; webhooks later). Loopback, private, link-local
 * (cloud metadata) and the other special-use ranges (`isForbiddenAddress`) are refused: an
 * IP literal before any connection, a name at connect time on the address it resolved to,
 * so a name that resolves to a private range, or re-resolves to one later, is refused too.
 */
export interface AddressGuardPolicy {
  /** Special-use networks exempt from the guard (configuration, for tests; empty in production). */
  readonly allowed: BlockList;
  /** The resolver; default the system's (`dns.lookup`). */
  readonly lookup?: Resolver;
}

/**
 * Everything that limits one use of the outbound client. Each caller declares its policy
 * once (a constant, or built once from configuration at construction) and makes one
 * `OutboundHttp` of it, so the connection pool is made once per use and never per request.
 */
export interface OutboundPolicy {
  /** Time to establish the connection (TCP and TLS). */
  readonly connectTimeoutMs: number;
  /** Time for the whole exchange, from the request to the last byte of the answer. */
  readonly totalTimeoutMs: number;
  /** The answer is dropped past this many bytes, while reading, so a hostile peer cannot make us buffer more. */
  readonly maxResponseBytes: number;
  /**
   * Redirects are never followed. `refuse`: a 3xx is `OutboundHttpError('redirect')`.
   * `return`: a 3xx is handed back as any other status (the proxy relays the upstream's
   * answer as it is, without its Location).
   */
  readonly redirects: 'refuse' | 'return';
  /** Media types an answer may have (`content_type` otherwise); absent: any. */
  readonly contentTypes?: readonly string[];
  /** The SSRF rules, where the target comes from outside; absent: any address. */
  readonly addressGuard?: AddressGuardPolicy;
  /** Extra trusted CAs (PEM), in addition to the system's. */
  readonly ca?: string;
}
