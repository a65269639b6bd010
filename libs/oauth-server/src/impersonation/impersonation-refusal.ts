import { OAuthError, type OAuthErrorCode } from '@broker/domain';

/**
 * An impersonation request refused: the OAuth error the client sees, and the `failure`
 * recorded in the `impersonation_decision` audit record (never sent).
 */
export class ImpersonationRefusal extends OAuthError {
  constructor(
    code: OAuthErrorCode,
    description: string,
    readonly failure: string,
    errorUri?: string,
  ) {
    super(code, description, errorUri);
  }
}
