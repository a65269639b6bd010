import { OAuthError } from '@broker/domain';
import { BrokerMetrics } from '@broker/telemetry';
import { Inject, Injectable } from '@nestjs/common';
import {
  GRANT_STRATEGIES,
  isRelayed,
  type GrantStrategy,
  type TokenOutcome,
  type TokenRequestContext,
} from './grant-strategy';
import { readTokenForm, repeatedParameter, required } from './token-form';

/**
 * `POST /oauth2/token`: parses the form and dispatches on `grant_type` to the mode's
 * strategies. A repeated parameter (RFC 6749 §3.2) is refused before the grant runs, after
 * the grant has recorded the refusal.
 */
@Injectable()
export class TokenEndpoint {
  private readonly strategies: ReadonlyMap<string, GrantStrategy>;

  constructor(
    @Inject(GRANT_STRATEGIES) strategies: readonly GrantStrategy[],
    private readonly metrics: BrokerMetrics,
  ) {
    this.strategies = new Map(strategies.map((s) => [s.grantType, s]));
  }

  /** Grant types this server answers (metadata). */
  get grantTypes(): string[] {
    return [...this.strategies.keys()];
  }

  handle(
    contentType: string | undefined,
    body: Buffer | undefined,
    context: TokenRequestContext,
  ): Promise<TokenOutcome> {
    if (this.metrics.enabled) return this.counted(contentType, body, context);
    return this.answer(readTokenForm(contentType, body), context);
  }

  /** `handle`, counted by grant type and outcome (`ok` or the OAuth error code), with the exchange's duration. */
  private async counted(
    contentType: string | undefined,
    body: Buffer | undefined,
    context: TokenRequestContext,
  ): Promise<TokenOutcome> {
    const started = performance.now();
    let grantType: string | undefined;
    try {
      const parsed = readTokenForm(contentType, body);
      grantType = parsed.form.get('grant_type');
      const outcome = await this.answer(parsed, context);
      // A relayed upstream refusal (proxy mode) is not parsed for its code.
      this.metrics.tokenRequest(
        grantType,
        isRelayed(outcome) && outcome.status >= 400 ? 'other' : 'ok',
        (performance.now() - started) / 1000,
      );
      return outcome;
    } catch (error) {
      this.metrics.tokenRequest(
        grantType,
        error instanceof OAuthError ? error.code : 'server_error',
        (performance.now() - started) / 1000,
      );
      throw error;
    }
  }

  private answer(
    { form, repeated }: ReturnType<typeof readTokenForm>,
    context: TokenRequestContext,
  ): Promise<TokenOutcome> {
    if (repeated.includes('grant_type')) throw repeatedParameter('grant_type');
    const grantType = required(form, 'grant_type');
    const strategy = this.strategies.get(grantType);
    if (strategy === undefined) throw new OAuthError('unsupported_grant_type', 'this grant type is not supported');
    const first = repeated[0];
    if (first !== undefined) {
      const error = repeatedParameter(first);
      strategy.refusedBeforeHandling?.(form, error);
      throw error;
    }
    const authorization = context.authorization;
    // Only a request that tried HTTP Basic needs the challenge: the others keep the promise as is.
    if (authorization === undefined || !BASIC.test(authorization)) return strategy.handle(form, context);
    return strategy.handle(form, context).catch((error: unknown) => {
      throw withBasicChallenge(error);
    });
  }
}

const BASIC = /^basic /i;

/**
 * RFC 6749 §5.2: when the client tried to authenticate with the Authorization header and
 * failed, the answer is 401 with a `WWW-Authenticate` challenge of the scheme it used.
 */
export function withBasicChallenge(error: unknown): unknown {
  if (!(error instanceof OAuthError) || error.code !== 'invalid_client' || error.challenge !== undefined) return error;
  return new OAuthError(error.code, error.description, error.errorUri, 'Basic realm="oauth2", charset="UTF-8"');
}
