/**
 * An authorization request as the person's API shows it (`GET /api/authorization-requests/{id}`).
 * Hand-typed until the generated types carry it.
 */
export interface AuthorizationRequestParty {
  readonly id: string;
  readonly display_name: string;
  readonly description: string | null;
  readonly logo_url: string | null;
}

export interface AuthorizationRequestView {
  readonly id: string;
  readonly status: 'pending' | 'completed' | 'denied' | 'expired';
  readonly step: 'consent' | 'connect' | 'done';
  readonly agent: AuthorizationRequestParty;
  readonly service: AuthorizationRequestParty;
  readonly scopes: readonly { readonly scope: string; readonly description: string }[];
  readonly needs_grant: boolean;
  readonly needs_connection: boolean;
  readonly grant_exists: boolean;
  readonly created_at: string;
  readonly expires_at: string;
  readonly expires_in: number;
  readonly answered_at: string | null;
}
