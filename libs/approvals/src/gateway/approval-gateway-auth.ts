import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { ApprovalError, assertNever, normalisePrincipal, type CompiledExpression } from '@broker/domain';
import {
  compileConfigExpression,
  GatewayCredentials,
  GatewayCredentialsRefused,
  type SubjectIdentity,
} from '@broker/oauth-server';
import { Inject, Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';

/** The machine credentials of a gateway request, as the headers carry them (docs/approvals.md). */
export interface GatewayHeaders {
  /** `Authorization`: `Bearer <jwt>`. */
  readonly authorization: string | undefined;
  /** Every `X-Client-Assertion` header value (it must be sent once). */
  readonly clientAssertion: readonly string[] | undefined;
}

/**
 * The verified identity of a gateway request: the subject token's principal and agent, and
 * the gateway itself (its client assertion's `sub`; null on consume, which takes no
 * assertion). The gateway is the actor of the events it causes.
 */
export interface GatewayIdentity extends SubjectIdentity {
  readonly gateway: string | null;
}

const BEARER = /^Bearer +([A-Za-z0-9_.~+/-]+=*) *$/i;

function unauthorized(message: string): ApprovalError {
  return new ApprovalError('gateway_unauthenticated', message);
}

/** A refusal of `GatewayCredentials` in the approvals API's vocabulary (never naming the trust source). */
function refused(error: unknown): never {
  if (!(error instanceof GatewayCredentialsRefused)) throw error;
  switch (error.refusal) {
    case 'assertion_invalid':
      throw unauthorized('the client assertion is not valid');
    case 'subject_invalid':
      throw unauthorized('the subject token is not valid');
    case 'identity_missing':
      throw unauthorized(error.message);
    case 'not_authorized':
      throw new ApprovalError('gateway_not_authorized', 'the gateway is not authorized');
    default:
      return assertNever(error.refusal, 'gateway refusal');
  }
}

/**
 * The gateway side of the approvals API authenticates with JWTs, verified exactly like
 * the token exchange's: the trust anchor `token_exchange.client_assertion`, the
 * claim expressions for principal and agent. Create takes both credentials and the
 * exchange's authorization expression; consume only the subject token; sync only the
 * client assertion, authorized by `approvals.sync.authorization.cel.expression` (compiled
 * at boot: a bad expression stops start-up naming the key). Missing or invalid credentials
 * are 401 `unauthorized`, an expression saying no is 403 `forbidden`.
 */
@Injectable()
export class ApprovalGatewayAuth {
  private readonly syncAuthorizes: CompiledExpression;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly credentials: GatewayCredentials,
  ) {
    this.syncAuthorizes = compileConfigExpression(
      'approvals.sync.authorization.cel.expression',
      config.approvals.sync.authorization.cel.expression,
      ['client_assertion'],
    );
  }

  /** Create: the subject token (Bearer) plus the client assertion (`X-Client-Assertion`). */
  async forCreate(headers: GatewayHeaders): Promise<GatewayIdentity> {
    const assertionJwt = this.clientAssertion(headers, false);
    if (assertionJwt === undefined)
      throw unauthorized("the gateway's client assertion is required in the X-Client-Assertion header");
    const subjectJwt = this.bearer(headers);
    if (subjectJwt === undefined) throw unauthorized('the subject token is required as Authorization: Bearer <jwt>');
    try {
      const assertion = await this.credentials.verifyAssertion(assertionJwt);
      const identity = this.identify(await this.credentials.verifySubject(subjectJwt));
      this.credentials.assertDistinctParties(assertionJwt, assertion, subjectJwt, identity);
      this.credentials.assertAuthorized(assertion);
      return { ...identity, gateway: typeof assertion.sub === 'string' ? assertion.sub : null };
    } catch (error) {
      return refused(error);
    }
  }

  /** Consume: the subject token (Bearer) only. */
  async forConsume(headers: GatewayHeaders): Promise<GatewayIdentity> {
    const subjectJwt = this.bearer(headers);
    if (subjectJwt === undefined) throw unauthorized('the subject token is required as Authorization: Bearer <jwt>');
    try {
      return { ...this.identify(await this.credentials.verifySubject(subjectJwt)), gateway: null };
    } catch (error) {
      return refused(error);
    }
  }

  /**
   * Sync: the client assertion only, in `X-Client-Assertion` or else as `Authorization:
   * Bearer`. When both are sent the header named for it wins (a gateway reusing its
   * create code may also send the subject token as Bearer).
   */
  async forSync(headers: GatewayHeaders): Promise<void> {
    const assertionJwt = this.clientAssertion(headers, true);
    if (assertionJwt === undefined)
      throw unauthorized("the gateway's client assertion is required (X-Client-Assertion or Authorization: Bearer)");
    let assertion: JWTPayload;
    try {
      assertion = await this.credentials.verifyAssertion(assertionJwt);
    } catch (error) {
      return refused(error);
    }
    let allowed: unknown;
    try {
      allowed = this.syncAuthorizes({ client_assertion: assertion });
    } catch {
      allowed = false;
    }
    if (allowed !== true)
      throw new ApprovalError('gateway_not_authorized', 'the gateway is not authorized to sync approvals');
  }

  /**
   * An authorization request's wait (docs/authorization-requests.md): the client assertion
   * as for sync, authorized by the token exchange's own expression
   * (`token_exchange.authorization.cel.expression`), since the gateway waits to retry an exchange.
   */
  async forAuthorizationWait(headers: GatewayHeaders): Promise<void> {
    const assertionJwt = this.clientAssertion(headers, true);
    if (assertionJwt === undefined)
      throw unauthorized("the gateway's client assertion is required (X-Client-Assertion or Authorization: Bearer)");
    try {
      this.credentials.assertAuthorized(await this.credentials.verifyAssertion(assertionJwt));
    } catch (error) {
      refused(error);
    }
  }

  private identify(subject: JWTPayload): SubjectIdentity {
    const identity = this.credentials.identify(subject);
    // The principal is an identity like the proxy's header: no control characters (log safety).
    const checked = normalisePrincipal(identity.principal);
    if (!checked.ok)
      throw new GatewayCredentialsRefused('identity_missing', 'the subject token has no usable principal claim');
    return { principal: checked.value, agentId: identity.agentId };
  }

  private bearer(headers: GatewayHeaders): string | undefined {
    if (headers.authorization === undefined || headers.authorization.trim() === '') return undefined;
    const match = BEARER.exec(headers.authorization);
    if (match === null) throw unauthorized('the Authorization header must be Bearer <jwt>');
    return match[1];
  }

  private clientAssertion(headers: GatewayHeaders, bearerFallback: boolean): string | undefined {
    const values = headers.clientAssertion ?? [];
    if (values.length > 1) throw new ApprovalError('invalid_input', 'the X-Client-Assertion header must be sent once');
    const value = values[0]?.trim();
    if (value !== undefined && value !== '') return value;
    return bearerFallback ? this.bearer(headers) : undefined;
  }
}
