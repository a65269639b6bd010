import { createHmac, hkdfSync } from 'node:crypto';
import type { SymmetricKey } from '@broker/config';

/**
 * Server nonces for DPoP proofs (RFC 9449 §8), the same on every replica without a shared
 * store: a nonce is a time slot and its HMAC under a key derived (HKDF) from each configured
 * `third_party_oauth2.jwe_keys` key, which every replica holds. New nonces name the current
 * slot under the first key; the current and the previous slot are accepted under any key, so
 * a nonce lives between half of `lifetime` and all of it, and rotating the keys (a new one
 * first, the old one kept a while) invalidates none early. The accepted values of the two
 * slots are computed once per slot, so checking a nonce is a set lookup. Nonces are public
 * values (handed to anyone who asks), so the lookup's timing reveals nothing secret.
 */
export class DpopNonces {
  private readonly keys: readonly Buffer[];
  private readonly slotMs: number;
  private slot = Number.NaN;
  private current = '';
  private accepted = new Set<string>();

  constructor(keys: readonly SymmetricKey[], lifetimeMs: number) {
    this.keys = keys.map(({ key }) =>
      Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'agent-identity-broker dpop nonce', 32)),
    );
    this.slotMs = Math.max(1000, Math.floor(lifetimeMs / 2));
  }

  /** The nonce to hand out at `nowMs`. */
  issue(nowMs: number): string {
    this.advance(nowMs);
    return this.current;
  }

  /** Whether `nonce` was handed out by a replica and has not expired at `nowMs`. */
  accepts(nonce: unknown, nowMs: number): boolean {
    if (typeof nonce !== 'string') return false;
    this.advance(nowMs);
    return this.accepted.has(nonce);
  }

  private advance(nowMs: number): void {
    const slot = Math.floor(nowMs / this.slotMs);
    if (slot === this.slot) return;
    this.slot = slot;
    const first = this.keys[0];
    this.current = first === undefined ? '' : nonceFor(first, slot);
    this.accepted = new Set(this.keys.flatMap((key) => [nonceFor(key, slot), nonceFor(key, slot - 1)]));
  }
}

function nonceFor(key: Buffer, slot: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.max(0, slot)));
  const mac = createHmac('sha256', key).update(counter).digest().subarray(0, 18);
  return Buffer.concat([counter.subarray(2), mac]).toString('base64url');
}
