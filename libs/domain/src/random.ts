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

export class CryptoRandom extends Random {
  bytes(length: number): Buffer {
    return randomBytes(length);
  }

  uuid(): string {
    return randomUUID();
  }
}
