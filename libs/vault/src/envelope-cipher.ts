import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { Inject, Injectable } from '@nestjs/common';
import { VaultError } from './vault-error';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const DEK_BYTES = 32;
const ALGORITHM = 'aes-256-gcm';

/**
 * Envelope encryption of every secret at rest. Each value gets a fresh random data key
 * (DEK); the value is sealed with AES-256-GCM under the DEK, and the DEK is sealed under
 * the current key-encryption key (KEK) of `encryption.keys`. Both seals carry the same
 * associated data, the *binding* (`service:<id>:client_secret`), so a ciphertext copied
 * to another row or purpose fails to open. Old KEKs stay usable for reading.
 *
 * Envelope layout (version 1):
 * `01 | kek id length | kek id | wrap iv | wrap tag | wrapped DEK | iv | tag | ciphertext`.
 */
@Injectable()
export class EnvelopeCipher {
  private readonly keks: ReadonlyMap<string, Buffer>;
  private readonly currentKekId: string;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig) {
    this.keks = new Map(config.encryption.keys.map((k) => [k.id, k.key]));
    this.currentKekId = config.encryption.current_key_id;
  }

  /** Seals `plaintext` for `binding` under the current KEK. */
  encrypt(plaintext: Buffer | string, binding: string): Buffer {
    const aad = associatedData(binding);
    const dek = randomBytes(DEK_BYTES);
    try {
      const sealed = seal(dek, typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext, aad);
      return this.wrap(dek, aad, sealed);
    } finally {
      dek.fill(0);
    }
  }

  /** Opens an envelope sealed for `binding`; throws `VaultError` otherwise. */
  decrypt(envelope: Buffer, binding: string): Buffer {
    const aad = associatedData(binding);
    const parsed = parse(envelope);
    const dek = this.openDataKey(parsed, aad);
    try {
      return open(dek, parsed.iv, parsed.tag, parsed.ciphertext, aad);
    } catch {
      throw new VaultError('decryption_failed', 'the secret could not be decrypted for this owner');
    } finally {
      dek.fill(0);
    }
  }

  /** The KEK an envelope's DEK is sealed under (for rotation reports). */
  kekIdOf(envelope: Buffer): string {
    return parse(envelope).kekId;
  }

  /** True when the envelope's DEK is sealed under the current KEK. */
  isCurrent(envelope: Buffer): boolean {
    return this.kekIdOf(envelope) === this.currentKekId;
  }

  /**
   * Re-seals the envelope's DEK under the current KEK without touching the value's own
   * ciphertext (KEK rotation). Verifies the binding on the way.
   */
  rewrap(envelope: Buffer, binding: string): Buffer {
    const aad = associatedData(binding);
    const parsed = parse(envelope);
    const dek = this.openDataKey(parsed, aad);
    try {
      // Proves the binding before re-sealing: a misplaced envelope is refused, not re-wrapped.
      open(dek, parsed.iv, parsed.tag, parsed.ciphertext, aad).fill(0);
      return this.wrap(dek, aad, { iv: parsed.iv, tag: parsed.tag, ciphertext: parsed.ciphertext });
    } catch (error) {
      if (error instanceof VaultError) throw error;
      throw new VaultError('decryption_failed', 'the secret could not be decrypted for this owner');
    } finally {
      dek.fill(0);
    }
  }

  /** Unseals the envelope's data key with the KEK it names. */
  private openDataKey(parsed: ParsedEnvelope, aad: Buffer): Buffer {
    const kek = this.keks.get(parsed.kekId);
    if (kek === undefined)
      throw new VaultError('unknown_key', `the key-encryption key "${parsed.kekId}" is not configured`);
    try {
      return open(
        kek,
        parsed.wrapIv,
        parsed.wrapTag,
        parsed.wrappedDek,
        Buffer.concat([aad, Buffer.from(parsed.kekId)]),
      );
    } catch {
      throw new VaultError('decryption_failed', 'the secret could not be decrypted for this owner');
    }
  }

  private wrap(dek: Buffer, aad: Buffer, sealed: Sealed): Buffer {
    const kek = this.keks.get(this.currentKekId) as Buffer;
    const kekId = Buffer.from(this.currentKekId, 'utf8');
    const wrapped = seal(kek, dek, Buffer.concat([aad, kekId]));
    return Buffer.concat([
      Buffer.from([VERSION, kekId.length]),
      kekId,
      wrapped.iv,
      wrapped.tag,
      wrapped.ciphertext,
      sealed.iv,
      sealed.tag,
      sealed.ciphertext,
    ]);
  }
}

interface Sealed {
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

function associatedData(binding: string): Buffer {
  if (binding.length === 0) throw new Error('an envelope binding is required');
  return Buffer.from(`agent-identity-broker:v1:${binding}`, 'utf8');
}

function seal(key: Buffer, plaintext: Buffer, aad: Buffer): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), ciphertext };
}

function open(key: Buffer, iv: Buffer, tag: Buffer, ciphertext: Buffer, aad: Buffer): Buffer {
  const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
}

type ParsedEnvelope = Sealed & { kekId: string; wrapIv: Buffer; wrapTag: Buffer; wrappedDek: Buffer };

function parse(envelope: Buffer): ParsedEnvelope {
  const fixed = IV_BYTES + TAG_BYTES + DEK_BYTES + IV_BYTES + TAG_BYTES;
  if (envelope.length < 2 || envelope[0] !== VERSION)
    throw new VaultError('malformed_envelope', 'not a version-1 envelope');
  const kekIdLength = envelope[1] as number;
  if (envelope.length < 2 + kekIdLength + fixed)
    throw new VaultError('malformed_envelope', 'the envelope is truncated');
  let at = 2;
  const take = (n: number): Buffer => {
    const part = envelope.subarray(at, at + n);
    at += n;
    return part;
  };
  const kekId = take(kekIdLength).toString('utf8');
  return {
    kekId,
    wrapIv: take(IV_BYTES),
    wrapTag: take(TAG_BYTES),
    wrappedDek: take(DEK_BYTES),
    iv: take(IV_BYTES),
    tag: take(TAG_BYTES),
    ciphertext: envelope.subarray(at),
  };
}
