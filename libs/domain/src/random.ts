import { randomBytes, randomUUID } from 'node:crypto';

/** The source of randomness (tokens, ids, keys). Injected so tests can make it predictable. */
export abstract class Random {
  abstract bytes(length: number): Buffer;
  abstract uuid(): string;

  /** `length` random bytes as base64url without padding. */
  token(length = 32): string {
    return this.bytes(length).toString('base64url');
  }

  /** `length` random bytes as lower-case hex. */
  hex(length: number): string {
    return this.bytes(length).toString('hex');
  }
}

const POOL_SIZE = 4096;
const POOLED_MAX = 64;

/**
 * The CSPRNG. Small requests (trace and span ids on every request) are served from a
 * pre-filled pool, like `crypto.randomUUID()` does, instead of one system call each;
 * every byte is still from `crypto.randomBytes` and is handed out once.
 */
export class CryptoRandom extends Random {
  private pool = Buffer.alloc(0);
  private offset = 0;

  bytes(length: number): Buffer {
    if (length > POOLED_MAX) return randomBytes(length);
    if (this.offset + length > this.pool.length) {
      this.pool = randomBytes(POOL_SIZE);
      this.offset = 0;
    }
    const out = Buffer.from(this.pool.subarray(this.offset, this.offset + length));
    this.pool.fill(0, this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  uuid(): string {
    return randomUUID();
  }
}
