import { createHash } from 'node:crypto';
import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { ApiError, Clock, Random, thirdPartyCallbackUrl, type Principal, type Service } from '@broker/domain';
import { PermissionSetRepository, ServiceRepository } from '@broker/persistence';
import { JweCodec, ProviderRefused, ProviderUnavailable, sanitiseProviderText, TokenVault } from '@broker/vault';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AuthorizationRequestsService } from '../authorization-requests/authorization-requests.service';

/** What the state token carries (docs/consent-and-connections.md). */
interface StateClaims {
  readonly principal: string;
  readonly serviceId: string;
  readonly verifier: string;
  readonly redirectUri: string;
}

/** Callback query parameters (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export interface CallbackQuery {
  readonly code?: unknown;
  readonly state?: unknown;
  readonly error?: unknown;
  readonly error_description?: unknown;
  readonly iss?: unknown;
}

/**
 * A callback failure: `error` for the page the person lands on, and a short description in
 * the broker's own words (never the provider's `error_description`).
 */
class CallbackFailure extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
  ) {
    super(code);
  }
}

/** A failure once the state is verified (this person, this service): it may go back to the state's `redirect_uri`. */
class VerifiedFailure extends CallbackFailure {
  constructor(
    failure: { code: string; description: string },
    readonly claims: StateClaims,
  ) {
    super(failure.code, failure.description);
  }
}

/**
 * Why the code exchange failed, as the callback's `error` (docs/consent-and-connections.md "Third-party connections and the token vault"):
 * the token endpoint answered an OAuth error (RFC 6749 §5.2) or an unusable answer
 * (`token_exchange_failed`), gave no answer or a 5xx (`provider_unreachable`), or the broker
 * failed on its side, storing the tokens for instance (`broker_error`).
 */
export function exchangeFailure(error: unknown): { code: string; description: string } {
  if (error instanceof ProviderUnavailable && error.unreachable)
    return { code: 'provider_unreachable', description: 'the provider could not be reached' };
  if (error instanceof ProviderRefused || error instanceof ProviderUnavailable)
    return { code: 'token_exchange_failed', description: 'the provider refused the authorization code' };
  return { code: 'broker_error', description: 'the broker could not complete the connection' };
}

/**
 * Connecting a third-party account: the authorization request with PKCE (RFC 7636, S256
 * for every service) and a JWE state token, and the callback that checks the state
 * (decrypts, unexpired, this principal, this service), exchanges the code and stores the
 * tokens sealed. Every callback outcome is a redirect; a failure stores nothing.
 */
@Injectable()
export class ConnectService {
  private readonly logger = new Logger(ConnectService.name);
  private readonly state: JweCodec;
  private readonly publicUrl: URL;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly services: ServiceRepository,
    private readonly permissionSets: PermissionSetRepository,
    private readonly vault: TokenVault,
    private readonly random: Random,
    clock: Clock,
    private readonly authorizationRequests: AuthorizationRequestsService,
  ) {
    this.state = new JweCodec(config.third_party_oauth2.jwe_keys, 'third-party state', clock);
    this.publicUrl = new URL(config.server.enduser.public_url);
  }

  /** The provider authorization URL to redirect the user to. */
  async authorizationUrl(principal: Principal, serviceId: string, redirectUri: string): Promise<string> {
    this.assertOwnHost(redirectUri);
    const service = await this.service(serviceId);
    const verifier = this.random.token(32);
    const state = await this.state.seal(
      { sub: principal.id, service_id: service.id, verifier, redirect_uri: redirectUri },
      Math.floor(this.config.third_party_oauth2.state_token_ttl / 1000),
    );
    const scopes = [
      ...new Set(
        (await this.permissionSets.list(service.id)).flatMap((set) =>
          set.serviceScopes.filter((e) => e.serviceId === service.id).flatMap((e) => e.scopes),
        ),
      ),
    ].sort();
    const url = new URL(service.authorizationEndpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', service.clientId);
    url.searchParams.set('redirect_uri', this.callbackUrl(service.id));
    if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
    url.searchParams.set('code_challenge_method', 'S256');
    return url.toString();
  }

  /** Handles the provider's redirect; returns where to send the user. */
  async callback(principal: Principal | undefined, serviceId: string, query: CallbackQuery): Promise<string> {
    try {
      const { redirectUri, principal: owner, serviceId: connected } = await this.complete(principal, serviceId, query);
      await this.completeAuthorizationRequests(owner, connected);
      const target = new URL(redirectUri);
      target.searchParams.set('success', 'true');
      target.searchParams.set('service_id', serviceId);
      return target.toString();
    } catch (error) {
      const failure =
        error instanceof CallbackFailure
          ? error
          : new CallbackFailure('broker_error', 'the broker could not complete the connection');
      if (!(error instanceof CallbackFailure))
        this.logger.error(`third-party callback failed unexpectedly: ${(error as Error).message}`);
      return this.failureUrl(failure).toString();
    }
  }

  /**
   * The session is stored: the person's allowed, pending authorization requests for the
   * service complete (docs/authorization-requests.md), so a waiting gateway learns it even if
   * the browser never returns. The connection itself succeeded whatever happens here.
   */
  private async completeAuthorizationRequests(principal: string, serviceId: string): Promise<void> {
    try {
      await this.authorizationRequests.connected(principal, serviceId);
    } catch (error) {
      this.logger.error(
        `authorization requests of service ${serviceId} could not be completed: ${(error as Error).message}`,
      );
    }
  }

  /**
   * Where a failure goes: with a verified state, back to the page that started the connection
   * (its `redirect_uri`, on the broker's host: a consent page keeps its pending request) with
   * `error`, `error_description` and `service_id`; otherwise the consent UI's sessions page,
   * since an unverified state's `redirect_uri` is not to be believed.
   */
  private failureUrl(failure: CallbackFailure): URL {
    const target =
      failure instanceof VerifiedFailure
        ? new URL(failure.claims.redirectUri)
        : new URL(`${this.config.server.enduser.consent_ui_url}/connections`);
    target.searchParams.set('error', failure.code);
    target.searchParams.set('error_description', failure.description);
    if (failure instanceof VerifiedFailure) target.searchParams.set('service_id', failure.claims.serviceId);
    return target;
  }

  private async complete(
    principal: Principal | undefined,
    serviceId: string,
    query: CallbackQuery,
  ): Promise<StateClaims> {
    // The state is verified before anything else in
    // the query is believed, so a link with a forged, expired or foreign state cannot put
    // a provider "error" of its author's choosing on the person's connections page.
    const claims = await this.openState(query.state);
    // CSRF: the state must have been issued to the user completing the flow.
    if (principal === undefined || claims.principal !== principal.id)
      throw new CallbackFailure('forbidden', 'this connection was started by another user');
    if (claims.serviceId !== serviceId.toLowerCase())
      throw new CallbackFailure('service_id_mismatch', 'the callback does not belong to this service');
    try {
      await this.exchange(claims, query);
    } catch (error) {
      // Verified from here on: the failure goes back to the page that started the connection.
      if (error instanceof CallbackFailure) throw new VerifiedFailure(error, claims);
      this.logger.error(`third-party callback failed unexpectedly: ${(error as Error).message}`);
      throw new VerifiedFailure(exchangeFailure(error), claims);
    }
    return claims;
  }

  /** The provider's answer for a verified state: its error, or the code exchanged and the tokens stored. */
  private async exchange(claims: StateClaims, query: CallbackQuery): Promise<void> {
    // RFC 6749 §4.1.2.1: a provider error ends the flow; its code is sanitised and capped, its
    // error_description never passed on (the redirect carries the broker's own words).
    if (query.error !== undefined) {
      const code = sanitiseProviderText(query.error, 64) || 'access_denied';
      throw new CallbackFailure(
        code,
        code === 'access_denied'
          ? 'the connection was cancelled at the provider'
          : 'the provider did not authorize the connection',
      );
    }
    if (typeof query.code !== 'string' || query.code.length === 0)
      throw new CallbackFailure('invalid_request', 'the provider sent no authorization code');
    const service = await this.services.findById(claims.serviceId);
    if (service === undefined) throw new CallbackFailure('invalid_state', 'the service no longer exists');
    // RFC 9207: when the provider names itself, it must be the service's issuer (mix-up defence).
    if (
      query.iss !== undefined &&
      (typeof query.iss !== 'string' || query.iss.replace(/\/+$/, '') !== service.issuerUri)
    )
      throw new CallbackFailure('invalid_state', 'the response came from another issuer');
    try {
      await this.vault.connect(claims.principal, service, query.code, this.callbackUrl(service.id), claims.verifier);
    } catch (error) {
      const failure = exchangeFailure(error);
      // The provider's own error code or the transport failure, never its error_description or a token.
      this.logger.warn(
        `code exchange with service ${service.id} failed (${failure.code}): ${error instanceof ProviderRefused ? `provider error ${error.code}` : (error as Error).message}`,
      );
      throw new CallbackFailure(failure.code, failure.description);
    }
  }

  private async openState(token: unknown): Promise<StateClaims> {
    const payload = typeof token === 'string' && token.length > 0 ? await this.state.open(token) : undefined;
    if (payload === undefined)
      throw new CallbackFailure('invalid_state', 'the connection attempt is invalid or has expired: start it again');
    const { sub, service_id: serviceId, verifier, redirect_uri: redirectUri } = payload;
    if (
      typeof sub !== 'string' ||
      typeof serviceId !== 'string' ||
      typeof verifier !== 'string' ||
      typeof redirectUri !== 'string'
    ) {
      throw new CallbackFailure('invalid_state', 'the connection attempt is invalid: start it again');
    }
    return { principal: sub, serviceId, verifier, redirectUri };
  }

  /** The redirect_uri's host must be the broker's public host; a client-sent Host header is never consulted. */
  private assertOwnHost(redirectUri: string): void {
    let url: URL | undefined;
    try {
      url = new URL(redirectUri);
    } catch {
      url = undefined;
    }
    if (
      url === undefined ||
      (url.protocol !== 'https:' && url.protocol !== 'http:') ||
      url.host !== this.publicUrl.host
    ) {
      throw new ApiError('invalid_redirect_uri', `redirect_uri must be an absolute URL on ${this.publicUrl.host}`);
    }
  }

  private async service(id: string): Promise<Service> {
    const service = await this.services.findById(id);
    if (service === undefined) throw new ApiError('service not found', `no service ${id}`);
    return service;
  }

  private callbackUrl(serviceId: string): string {
    return thirdPartyCallbackUrl(this.config.server.enduser.public_url, serviceId);
  }
}
