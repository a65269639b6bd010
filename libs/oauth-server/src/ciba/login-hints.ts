import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { normalisePrincipal, type Agent, type CompiledExpression } from '@broker/domain';
import { Inject, Injectable } from '@nestjs/common';
import { compileConfigExpression } from '../token/config-expression';

/**
 * OpenID CIBA Core 1.0 §7.1 `login_hint` → the person (docs/ciba.md "The endpoint"):
 * `oauth2_authorization_server.ciba.login_hint.expression`, CEL over `login_hint` (string) and
 * `client` (`{id, name}`), compiled at boot (a bad expression stops start-up naming the key).
 * A result that is not a principal (a non-empty string of at most 200 characters without
 * control characters), or an evaluation error, names nobody.
 */
@Injectable()
export class LoginHints {
  private readonly expression: CompiledExpression;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig) {
    this.expression = compileConfigExpression(
      'oauth2_authorization_server.ciba.login_hint.expression',
      config.oauth2_authorization_server.ciba.login_hint.expression,
      ['login_hint', 'client'],
    );
  }

  /** The principal `hint` names for `agent`'s request, or undefined. */
  principalOf(hint: string, agent: Agent): string | undefined {
    let result: unknown;
    try {
      result = this.expression({ login_hint: hint, client: { id: agent.id, name: agent.displayName } });
    } catch {
      return undefined;
    }
    if (typeof result !== 'string') return undefined;
    const principal = normalisePrincipal(result);
    return principal.ok ? principal.value : undefined;
  }
}
