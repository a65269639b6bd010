import type { KeyObject } from 'node:crypto';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { assertNever, Clock, type SigningAlgorithm } from '@broker/domain';
import { adminEvent, EventLedger, firstSigningKeyAdded, recordChange } from '@broker/events';
import { Database, SigningKeyRepository, type SigningKeyRecord } from '@broker/persistence';
import { bindings, EnvelopeCipher } from '@broker/vault';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { generateSigningKey, importPrivateKey } from './key-material';
import { KeyManagementError } from '../key-management-error';

/** The key tokens are signed with, imported once. */
export interface CurrentSigningKey {
  readonly kid: string;
  readonly algorithm: SigningAlgorithm;
  readonly privateKey: KeyObject;
}

/** A JWK set of public keys (RFC 7517 §5). */
export interface JsonWebKeySet {
  readonly keys: readonly Readonly<Record<string, string>>[];
}

interface KeySetSnapshot {
  readonly loadedAtMs: number;
  readonly jwks: JsonWebKeySet;
  readonly current: CurrentSigningKey | undefined;
}

/**
 * Keys changed by another process (replica, standalone admin server) are picked up
 * within this time; changes made in this process are visible at once.
 */
const SNAPSHOT_TTL_MS = 30_000;

/**
 * One key-set cache per open database, shared by both servers of a process (they hold
 * the same `Database`), so a key added on the admin server is in the end-user server's
 * JWKS at once.
 */
const snapshots = new WeakMap<Database, Promise<KeySetSnapshot>>();

/**
 * The broker's signing keys: admin operations (add, list, promote, soft delete), the
 * first key at start-up, and, for the token endpoint and JWKS, the current private key
 * and the public key set, imported once and cached, never per request.
 */
@Injectable()
export class SigningKeyService implements OnApplicationBootstrap {
  private readonly logger = new Logger(SigningKeyService.name);

  constructor(
    private readonly keys: SigningKeyRepository,
    private readonly cipher: EnvelopeCipher,
    private readonly database: Database,
    private readonly clock: Clock,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly ledger: EventLedger,
  ) {}

  /** In local and hybrid mode the broker signs tokens, so a first key must exist (docs/admin-api.md). */
  async onApplicationBootstrap(): Promise<void> {
    if (this.config.oauth2_authorization_server.mode === 'proxy') return;
    // The first key is the broker's own `signing_key.added` (no admin, no request).
    const added = recordChange(this.ledger, (key: SigningKeyRecord) => firstSigningKeyAdded(key.kid, key.algorithm));
    const created = await this.keys.ensureOne(() => this.newKey('ES256'), added);
    if (created) {
      this.invalidate();
      this.logger.log(`created the first signing key ${created.kid} (${created.algorithm})`);
    }
  }

  list(): Promise<SigningKeyRecord[]> {
    return this.keys.list();
  }

  /** Each change is `signing_key.added / promoted / removed` by `admin`, in the change's transaction. */
  async add(algorithm: SigningAlgorithm, admin: string): Promise<SigningKeyRecord> {
    const events = recordChange(this.ledger, (key: SigningKeyRecord) =>
      adminEvent('signing_key.added', admin, {}, { kid: key.kid, algorithm: key.algorithm }),
    );
    const record = await this.keys.add(await this.newKey(algorithm), events);
    this.invalidate();
    return record;
  }

  async promote(kid: string, admin: string): Promise<SigningKeyRecord> {
    const record = await this.keys.promote(
      kid,
      recordChange(this.ledger, () => adminEvent('signing_key.promoted', admin, {}, { kid })),
    );
    if (record === undefined) throw new KeyManagementError('signing_key_missing', `no signing key ${kid}`);
    this.invalidate();
    return record;
  }

  async delete(kid: string, admin: string): Promise<void> {
    const outcome = await this.keys.softDelete(
      kid,
      this.clock.now(),
      recordChange(this.ledger, () => adminEvent('signing_key.removed', admin, {}, { kid })),
    );
    switch (outcome) {
      case 'deleted':
        this.invalidate();
        return;
      case 'not_found':
        throw new KeyManagementError('signing_key_missing', `no signing key ${kid}`);
      case 'last_key':
        throw new KeyManagementError(
          'last_signing_key',
          'the last signing key cannot be deleted: add another key first',
        );
      case 'current_key':
        throw new KeyManagementError(
          'current_signing_key',
          'the current signing key cannot be deleted: promote another key first',
        );
      default:
        assertNever(outcome, 'delete outcome');
    }
  }

  /** The public keys of every live key (JWKS), newest first. */
  async jwks(): Promise<JsonWebKeySet> {
    return (await this.snapshot()).jwks;
  }

  /** The current signing key, or undefined when there is none (proxy mode). */
  async currentKey(): Promise<CurrentSigningKey | undefined> {
    return (await this.snapshot()).current;
  }

  private async newKey(algorithm: SigningAlgorithm) {
    const generated = await generateSigningKey(algorithm);
    return {
      kid: generated.kid,
      algorithm,
      publicJwk: generated.publicJwk,
      privateKeyEnvelope: this.cipher.encrypt(generated.privateKeyDer, bindings.signingKey(generated.kid)),
      createdAt: this.clock.now(),
    };
  }

  private invalidate(): void {
    snapshots.delete(this.database);
  }

  private snapshot(): Promise<KeySetSnapshot> {
    const cached = snapshots.get(this.database);
    if (cached !== undefined) {
      return cached.then((snapshot) =>
        this.clock.nowMs() - snapshot.loadedAtMs < SNAPSHOT_TTL_MS ? snapshot : this.reload(),
      );
    }
    return this.reload();
  }

  private reload(): Promise<KeySetSnapshot> {
    const loading = this.load();
    snapshots.set(this.database, loading);
    loading.catch(() => snapshots.delete(this.database));
    return loading;
  }

  private async load(): Promise<KeySetSnapshot> {
    const live = await this.keys.listLive();
    const currentRecord = live.find((key) => key.isCurrent);
    const current = currentRecord && {
      kid: currentRecord.kid,
      algorithm: currentRecord.algorithm,
      privateKey: importPrivateKey(
        this.cipher.decrypt(currentRecord.privateKeyEnvelope, bindings.signingKey(currentRecord.kid)),
      ),
    };
    return { loadedAtMs: this.clock.nowMs(), jwks: { keys: live.map((key) => key.publicJwk) }, current };
  }
}
