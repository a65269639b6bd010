import type { DataSource } from 'typeorm';
import { preparedQuery } from '../prepared-query';

/** A token the Identity Assertion JWT Authorization Grant is about to issue, as its authorization records it. */
export interface EnterpriseIssue {
  /** The id a new row takes (a live row keeps its own). */
  readonly candidateId: string;
  readonly principal: string;
  readonly agentId: string;
  /** The trusted issuer (the enterprise IdP) that signed the assertion. */
  readonly issuer: string;
  readonly resourceUri: string;
  readonly scopes: readonly string[];
  readonly now: Date;
  /** The token's `exp`: the row is live until its last token expires. */
  readonly expiresAt: Date;
  /** The assertion's `iat`: one issued before the pairing's last revocation buys nothing. */
  readonly assertionIssuedAt: Date;
}

/**
 * One statement: the live row of (person, agent, issuer, resource) is created or extended, unless
 * the assertion was issued before the last revocation of that pairing (then no row is returned).
 * Two concurrent first tokens meet at the partial unique index; both get the one row.
 */
const RECORD = `INSERT INTO enterprise_authorizations
  (id, principal, agent_id, issuer, resource_uri, scopes, first_issued_at, last_issued_at, expires_at)
SELECT $1::uuid, $2::varchar, $3::uuid, $4::text, $5::text, $6::jsonb, $7::timestamptz, $7::timestamptz, $8::timestamptz
 WHERE NOT EXISTS (SELECT 1 FROM enterprise_authorizations
                    WHERE principal = $2::varchar AND agent_id = $3::uuid AND issuer = $4::text AND resource_uri = $5::text
                      AND revoked_at IS NOT NULL AND revoked_at >= $9::timestamptz)
ON CONFLICT (principal, agent_id, issuer, resource_uri) WHERE revoked_at IS NULL DO UPDATE
  SET last_issued_at = EXCLUDED.last_issued_at, scopes = EXCLUDED.scopes,
      expires_at = GREATEST(enterprise_authorizations.expires_at, EXCLUDED.expires_at)
RETURNING id`;

/**
 * What a person's organisation allowed an agent through an enterprise IdP's assertions
 * (docs/oauth2.md "Enterprise-managed authorization"): the `sid` of the tokens issued that way,
 * which introspection reads and revocation ends.
 */
export class EnterpriseAuthorizationRepository {
  private readonly recordStatement: (values: readonly unknown[]) => Promise<{ id: string }[]>;

  constructor(private readonly dataSource: DataSource) {
    this.recordStatement = preparedQuery<{ id: string }>(dataSource, 'broker_record_enterprise_authorization', RECORD);
  }

  /** The id of the live authorization the token belongs to; undefined when the assertion predates a revocation of it. */
  async record(issue: EnterpriseIssue): Promise<string | undefined> {
    const rows = await this.recordStatement([
      issue.candidateId,
      issue.principal,
      issue.agentId,
      issue.issuer,
      issue.resourceUri,
      JSON.stringify(issue.scopes),
      issue.now,
      issue.expiresAt,
      issue.assertionIssuedAt,
    ]);
    return rows[0]?.id;
  }
}
