import { Clock, Random, type Service } from '@broker/domain';
import { EventLedger, sessionConnected, sessionRefreshEvent } from '@broker/events';
import {
  ServiceRepository,
  SessionRepository,
  type LockedSession,
  type ThirdPartySessionRecord,
  type WithinTransaction,
} from '@broker/persistence';
import { BrokerMetrics, currentTraceId, type RefreshTrigger } from '@broker/telemetry';
import { Injectable, Logger } from '@nestjs/common';
import { bindings } from './bindings';
import { EnvelopeCipher } from './envelope-cipher';
import { ProviderRefused, ProviderTokenClient, type ProviderTokens } from './provider-token-client';

/** Why no usable token could be produced. */
export type TokenVaultFailure = 'no_session' | 'reauthentication_required' | 'refresh_unavailable' | 'refresh_failed';

export class TokenVaultError extends Error {
  constructor(
    readonly code: TokenVaultFailure,
    message: string,
    /** The service whose session it is, when the caller named one (a forced refresh): the answer names it. */
    readonly serviceId?: string,
  ) {
    super(message);
    this.name = 'TokenVaultError';
  }
}

/** A decrypted access token, for the caller's immediate use only (never stored or logged). */
export interface UsableToken {
  readonly accessToken: string;
  readonly tokenType: string;
  readonly expiresAt: Date | null;
  readonly scopes: readonly string[];
}

/** What a refresh under the lock produced; failures are returned, so the lock's transaction commits what they wrote. */
type RefreshOutcome = { readonly token: UsableToken } | { readonly failure: TokenVaultError };

const REAUTHENTICATE = 'the provider refused the refresh token: reconnect the service';

function failed(code: TokenVaultFailure, message: string): RefreshOutcome {
  return { failure: new TokenVaultError(code, message) };
}

/**
 * Why a refresh runs: `force` (even when fresh), the version the caller read, and for the
 * proactive sweep its window (due by `isDueAhead` instead of the margin)
 * and a callback told when this refresh wrote new tokens.
 */
interface RefreshIntent {
  readonly force: boolean;
  readonly seenVersion: number;
  readonly dueWithinMs?: number;
  readonly onRefreshed?: () => void;
}

/** Refresh when the access token expires within this margin. */
export const REFRESH_MARGIN_MS = 30_000;

/**
 * The token vault: third-party tokens sealed at rest, and one refresh mechanism for the
 * token exchange (`getUsableToken`) and the forced refresh. Refresh is single-flight:
 * concurrent callers in this process share one refresh; across replicas the session's
 * refresh lock (row lock, re-read after acquiring) lets exactly one refresh happen and
 * the others read its result, so a rotating refresh token is used once. A refresh token
 * the provider refused marks the session (committed), and a marked session is answered
 * `reauthentication_required` without calling the provider again until the person
 * reconnects. A refresh writes back only over the session version it read: a reconnect or
 * a deletion that lands while the provider answers wins, and the refresh answer is dropped.
 */
@Injectable()
export class TokenVault {
  private readonly logger = new Logger(TokenVault.name);
  private readonly inFlight = new Map<string, Promise<UsableToken>>();

  constructor(
    private readonly sessions: SessionRepository,
    private readonly services: ServiceRepository,
    private readonly cipher: EnvelopeCipher,
    private readonly client: ProviderTokenClient,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly metrics: BrokerMetrics,
    private readonly events: EventLedger,
  ) {}

  /**
   * Exchanges an authorization code with its PKCE verifier (the client secret only for
   * confidential services) and stores the session. Throws the provider's refusal or
   * unavailability; nothing is stored then.
   */
  async connect(
    principal: string,
    service: Service,
    code: string,
    redirectUri: string,
    codeVerifier: string,
  ): Promise<void> {
    const tokens = await this.client.exchangeCode(
      service,
      await this.clientSecret(service),
      code,
      redirectUri,
      codeVerifier,
    );
    await this.store(principal, service.id, tokens);
  }

  /** Stores (or replaces in place) the principal's session with the service, sealed; its `session.connected` event in the same transaction. */
  async store(principal: string, serviceId: string, tokens: ProviderTokens): Promise<void> {
    const now = this.clock.now();
    await this.sessions.upsert(
      {
        id: this.random.uuid(),
        principal,
        serviceId,
        ...this.seal(principal, serviceId, tokens, undefined, now),
        initiatedAt: now,
        updatedAt: now,
      },
      (session, manager) => this.events.record(sessionConnected(principal, serviceId, [...session.scopes]), manager),
    );
  }

  /** The session's access token, refreshed first when expired or about to expire. */
  async getUsableToken(principal: string, serviceId: string): Promise<UsableToken> {
    return this.usableTokenOf(await this.sessions.find(principal, serviceId), principal, serviceId);
  }

  /**
   * `getUsableToken` for a session row the caller has just read (the token exchange reads
   * it together with the grant, in one query): opened when fresh, else refreshed as above.
   */
  async usableTokenOf(
    session: ThirdPartySessionRecord | undefined,
    principal: string,
    serviceId: string,
  ): Promise<UsableToken> {
    if (session === undefined) throw new TokenVaultError('no_session', 'no session with the service');
    // The mark stops the dead refresh token from reaching the provider on every exchange.
    if (session.needsReauthentication) throw new TokenVaultError('reauthentication_required', REAUTHENTICATE);
    if (this.isFresh(session)) return this.open(session);
    return this.singleFlight(principal, serviceId, () =>
      this.refreshLocked(principal, serviceId, { force: false, seenVersion: session.version }),
    );
  }

  /** Refreshes even when the access token is still valid (needs a usable refresh token). */
  async forceRefresh(principal: string, serviceId: string): Promise<UsableToken> {
    try {
      const session = await this.sessions.find(principal, serviceId);
      if (session === undefined) throw new TokenVaultError('no_session', 'no session with the service');
      return await this.singleFlight(principal, serviceId, () =>
        this.refreshLocked(principal, serviceId, { force: true, seenVersion: session.version }),
      );
    } catch (error) {
      // The person asked about this service: the refusal names it.
      throw error instanceof TokenVaultError ? new TokenVaultError(error.code, error.message, serviceId) : error;
    }
  }

  /**
   * The proactive sweep's refresh of a session it claimed at `seenVersion`.
   * The exchange's single flight (an exchange arriving meanwhile shares this refresh, or this
   * joins the exchange's) and refresh lock; re-checked under the lock: a session another
   * caller or replica refreshed (version changed), or no longer due (`isDueAhead`), is left
   * alone, so the provider is asked at most once. True when this call refreshed; throws the
   * exchange's `TokenVaultError`s (`invalid_grant` marks the session, as for an exchange).
   */
  async refreshAhead(principal: string, serviceId: string, seenVersion: number, windowMs: number): Promise<boolean> {
    let refreshed = false;
    await this.singleFlight(principal, serviceId, () =>
      this.refreshLocked(principal, serviceId, {
        force: false,
        seenVersion,
        dueWithinMs: windowMs,
        onRefreshed: () => (refreshed = true),
      }),
    );
    return refreshed;
  }

  /**
   * Due for a refresh ahead of expiry: the access token expires within `windowMs` and at
   * least half its lifetime since the last write has passed (the claim's rule, so a provider
   * issuing tokens shorter than the window is refreshed at half-life, not on every sweep);
   * always when not fresh, so an exchange sharing the sweep's flight gets a fresh token.
   */
  isDueAhead(session: ThirdPartySessionRecord, windowMs: number): boolean {
    if (session.accessTokenExpiresAt === null) return false;
    if (!this.isFresh(session)) return true;
    const now = this.clock.nowMs();
    const remaining = session.accessTokenExpiresAt.getTime() - now;
    return remaining <= windowMs && remaining <= now - session.updatedAt.getTime();
  }

  /** True when the session's access token is not within the refresh margin of expiry. */
  isFresh(session: ThirdPartySessionRecord): boolean {
    return (
      session.accessTokenExpiresAt === null ||
      session.accessTokenExpiresAt.getTime() - this.clock.nowMs() > REFRESH_MARGIN_MS
    );
  }

  private singleFlight(
    principal: string,
    serviceId: string,
    refresh: () => Promise<UsableToken>,
  ): Promise<UsableToken> {
    const key = `${principal}\u0000${serviceId}`;
    const existing = this.inFlight.get(key);
    if (existing !== undefined) return existing;
    const flight = refresh().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, flight);
    return flight;
  }

  private async refreshLocked(principal: string, serviceId: string, intent: RefreshIntent): Promise<UsableToken> {
    // Failures are returned through the lock, not thrown inside it: on PostgreSQL a throw
    // would roll back the re-authentication mark with the lock's transaction.
    // The service and its secret are read before the row lock is taken: under it (PostgreSQL) the lock's transaction
    // holds one pool connection, and a read needing a second one deadlocks once as many refreshes run at once as the
    // pool has connections (each holds one and waits for another) until the pool's acquire timeout fails them all.
    const service = await this.services.findById(serviceId);
    const clientSecret = service === undefined ? null : await this.clientSecret(service);
    const outcome = await this.sessions.withRefreshLock(principal, serviceId, (locked) =>
      this.refreshUnderLock(locked, principal, serviceId, intent, service, clientSecret),
    );
    if ('failure' in outcome) throw outcome.failure;
    return outcome.token;
  }

  private async refreshUnderLock(
    locked: LockedSession,
    principal: string,
    serviceId: string,
    intent: RefreshIntent,
    service: Service | undefined,
    clientSecret: string | null,
  ): Promise<RefreshOutcome> {
    const current = locked.current;
    // Deleted meanwhile: never resurrected.
    if (current === undefined) return failed('no_session', 'no session with the service');
    // Another caller (this process or a replica) refreshed, or the person reconnected, while we waited: use its result.
    if (current.version !== intent.seenVersion && current.needsReauthentication !== true)
      return { token: this.open(current) };
    if (
      !intent.force &&
      (intent.dueWithinMs === undefined ? this.isFresh(current) : !this.isDueAhead(current, intent.dueWithinMs))
    )
      return { token: this.open(current) };
    if (current.needsReauthentication === true) return failed('reauthentication_required', REAUTHENTICATE);
    const now = this.clock.now();
    if (
      current.refreshTokenEnvelope === null ||
      (current.refreshTokenExpiresAt !== null && current.refreshTokenExpiresAt.getTime() <= now.getTime())
    ) {
      return failed('refresh_unavailable', 'the session has no usable refresh token: reconnect the service');
    }
    if (service === undefined) return failed('no_session', 'the service no longer exists');
    const refreshToken = this.cipher
      .decrypt(current.refreshTokenEnvelope, bindings.sessionToken(serviceId, principal, 'refresh_token'))
      .toString('utf8');
    const started = this.clock.nowMs();
    // broker_vault_refreshes_total / _duration_seconds, by what asked for the refresh.
    const trigger: RefreshTrigger = intent.force
      ? 'forced'
      : intent.dueWithinMs !== undefined
        ? 'proactive'
        : 'exchange';
    const roundTrip = performance.now();
    let tokens: ProviderTokens;
    try {
      tokens = await this.client.refresh(service, clientSecret, refreshToken);
      this.metrics.vaultRefresh('refreshed', trigger, (performance.now() - roundTrip) / 1000);
    } catch (error) {
      const refused = error instanceof ProviderRefused && error.code === 'invalid_grant';
      this.metrics.vaultRefresh(
        refused ? 'reauthentication_required' : 'refresh_failed',
        trigger,
        (performance.now() - roundTrip) / 1000,
      );
      if (refused) {
        const marked = await locked.markNeedsReauthentication(
          now,
          this.refreshEvent('session.needs_reauthentication', principal, serviceId, trigger),
        );
        if (!marked.written) return this.superseded(marked.current, serviceId);
        this.logger.warn(
          `refresh refused by the provider (invalid_grant) for service ${serviceId}: the user must reconnect`,
        );
        return failed('reauthentication_required', REAUTHENTICATE);
      }
      this.logger.warn(
        `refresh failed for service ${serviceId}: ${error instanceof ProviderRefused ? `provider error ${error.code}` : (error as Error).message}`,
      );
      return failed('refresh_failed', 'the provider could not refresh the session');
    }
    const sealed = this.seal(principal, serviceId, tokens, current, this.clock.now());
    const saved = await locked.save(
      { ...sealed, updatedAt: this.clock.now() },
      this.refreshEvent('session.refreshed', principal, serviceId, trigger),
    );
    if (!saved.written) return this.superseded(saved.current, serviceId);
    intent.onRefreshed?.();
    this.logger.log(`refreshed the session with service ${serviceId} in ${this.clock.nowMs() - started} ms`);
    return {
      token: {
        accessToken: tokens.accessToken,
        tokenType: tokens.tokenType,
        expiresAt: sealed.accessTokenExpiresAt,
        scopes: sealed.scopes,
      },
    };
  }

  /**
   * A refresh's event, recorded with the refresh lock's write (PostgreSQL: in its
   * transaction; PGlite: right after the write). The person forcing a refresh is its actor;
   * an exchange's or the sweep's refresh is the broker's own work (the trigger says which).
   */
  private refreshEvent(
    type: 'session.refreshed' | 'session.needs_reauthentication',
    principal: string,
    serviceId: string,
    trigger: RefreshTrigger,
  ): WithinTransaction<ThirdPartySessionRecord> {
    const traceId = currentTraceId();
    return (_session, manager) =>
      this.events.record(sessionRefreshEvent(type, principal, serviceId, trigger, traceId), manager);
  }

  /**
   * The session changed while the provider answered (a reconnect or a deletion; PGlite's
   * lock does not hold the row): the newer row wins and the refresh answer is dropped.
   */
  private superseded(current: ThirdPartySessionRecord | undefined, serviceId: string): RefreshOutcome {
    this.logger.log(
      `refresh result for service ${serviceId} dropped: the session was ${current === undefined ? 'deleted' : 'replaced'} meanwhile`,
    );
    if (current === undefined) return failed('no_session', 'no session with the service');
    if (current.needsReauthentication === true) return failed('reauthentication_required', REAUTHENTICATE);
    return { token: this.open(current) };
  }

  private async clientSecret(service: Service): Promise<string | null> {
    if (!service.hasClientSecret) return null;
    const envelope = await this.services.findSecretEnvelope(service.id);
    return envelope ? this.cipher.decrypt(envelope, bindings.clientSecret(service.id)).toString('utf8') : null;
  }

  private open(session: ThirdPartySessionRecord): UsableToken {
    return {
      accessToken: this.cipher
        .decrypt(
          session.accessTokenEnvelope,
          bindings.sessionToken(session.serviceId, session.principal, 'access_token'),
        )
        .toString('utf8'),
      tokenType: session.tokenType,
      expiresAt: session.accessTokenExpiresAt,
      scopes: session.scopes,
    };
  }

  /** Seals new tokens; a refresh answer without a refresh token keeps the old one (RFC 6749 §6). */
  private seal(
    principal: string,
    serviceId: string,
    tokens: ProviderTokens,
    previous: ThirdPartySessionRecord | undefined,
    now: Date,
  ) {
    const at = (seconds: number | undefined): Date | null =>
      seconds === undefined ? null : new Date(now.getTime() + seconds * 1000);
    const refreshTokenEnvelope =
      tokens.refreshToken !== undefined
        ? this.cipher.encrypt(tokens.refreshToken, bindings.sessionToken(serviceId, principal, 'refresh_token'))
        : (previous?.refreshTokenEnvelope ?? null);
    return {
      accessTokenEnvelope: this.cipher.encrypt(
        tokens.accessToken,
        bindings.sessionToken(serviceId, principal, 'access_token'),
      ),
      refreshTokenEnvelope,
      tokenType: tokens.tokenType,
      scopes: tokens.scopes ?? previous?.scopes ?? [],
      accessTokenExpiresAt: at(tokens.expiresIn),
      refreshTokenExpiresAt:
        tokens.refreshToken !== undefined
          ? at(tokens.refreshTokenExpiresIn)
          : (previous?.refreshTokenExpiresAt ?? null),
    };
  }
}
