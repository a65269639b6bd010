import { testConfig, testKey } from '@broker/testing';
import { describe, expect, it } from 'vitest';
import { EnvelopeCipher } from './envelope-cipher';
import { VaultError } from './vault-error';

const OLD = { id: 'kek-old', key: testKey() };
const NEW = { id: 'kek-new', key: testKey() };
const cipherWith = (current: string, keys = [OLD, NEW]): EnvelopeCipher =>
  new EnvelopeCipher(testConfig({ encryption: { keys, current_key_id: current } }));

describe('EnvelopeCipher', () => {
  it('round-trips a secret and never contains the plaintext', () => {
    const cipher = cipherWith('kek-new');
    const envelope = cipher.encrypt('s3cret-client-secret', 'service:a:client_secret');
    expect(envelope.includes(Buffer.from('s3cret-client-secret'))).toBe(false);
    expect(cipher.decrypt(envelope, 'service:a:client_secret').toString()).toBe('s3cret-client-secret');
    expect(cipher.kekIdOf(envelope)).toBe('kek-new');
  });

  it('uses a fresh data key each time: equal secrets give different envelopes', () => {
    const cipher = cipherWith('kek-new');
    expect(cipher.encrypt('same', 'b').equals(cipher.encrypt('same', 'b'))).toBe(false);
  });

  it('refuses an envelope presented for another owner or purpose', () => {
    const cipher = cipherWith('kek-new');
    const envelope = cipher.encrypt('secret', 'service:a:client_secret');
    expect(() => cipher.decrypt(envelope, 'service:b:client_secret')).toThrow(VaultError);
    expect(() => cipher.decrypt(envelope, 'service:a:refresh_token')).toThrow(/could not be decrypted/);
  });

  it('detects tampering anywhere in the envelope', () => {
    const cipher = cipherWith('kek-new');
    const envelope = cipher.encrypt('secret', 'x');
    for (const index of [12, 30, 60, envelope.length - 1]) {
      const tampered = Buffer.from(envelope);
      tampered[index] = (tampered[index] as number) ^ 1;
      expect(() => cipher.decrypt(tampered, 'x')).toThrow(VaultError);
    }
    expect(() => cipher.decrypt(Buffer.from([9, 9, 9]), 'x')).toThrow(/version-1/);
  });

  it('reads with an old KEK after current_key_id moves, writes with the new one, and rewraps', () => {
    const before = cipherWith('kek-old');
    const envelope = before.encrypt('secret', 'x');
    const after = cipherWith('kek-new');
    expect(after.decrypt(envelope, 'x').toString()).toBe('secret');
    expect(after.isCurrent(envelope)).toBe(false);
    const rewrapped = after.rewrap(envelope, 'x');
    expect(after.kekIdOf(rewrapped)).toBe('kek-new');
    // Once rewrapped, the old KEK can be removed.
    expect(cipherWith('kek-new', [NEW]).decrypt(rewrapped, 'x').toString()).toBe('secret');
    expect(() => cipherWith('kek-new', [NEW]).decrypt(envelope, 'x')).toThrow(/"kek-old" is not configured/);
  });
});
