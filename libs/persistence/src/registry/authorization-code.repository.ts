import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** What an authorization code is bound to. */
export interface AuthorizationCodeRecord {
  readonly agentId: string;
  readonly principal: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly scopes: readonly string[];
  /** RFC 8707: the resources of the authorization request; absent or empty: none. */
  readonly resources?: readonly string[];
  /** The Client ID Metadata Document URL the code was issued to; absent or null: the agent's own UUID `client_id`. */
  readonly clientIdUrl?: string | null;
  /** RFC 9449 §10: the JWK thumbprint of the DPoP key the authorization request bound the code to; absent or null: none. */
  readonly dpopJkt?: string | null;
  readonly expiresAt: Date;
}

/** Authorization codes, stored by digest; redemption is one atomic statement. */
@Injectable()
export class AuthorizationCodeRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async store(codeSha256: Buffer, record: AuthorizationCodeRecord, now: Date): Promise<void> {
    await this.dataSource.query(
      'INSERT INTO authorization_codes (code_sha256, agent_id, principal, redirect_uri, code_challenge, scopes, resources, expires_at, created_at, client_id_url, dpop_jkt) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
      [
        codeSha256,
        record.agentId,
        record.principal,
        record.redirectUri,
        record.codeChallenge,
        JSON.stringify(record.scopes),
        JSON.stringify(record.resources ?? []),
        record.expiresAt,
        now,
        record.clientIdUrl ?? null,
        record.dpopJkt ?? null,
      ],
    );
  }

  /**
   * Consumes the code: whoever deletes the row owns it, so a replayed or concurrently
   * redeemed code yields undefined. Expired rows are consumed too (and refused by the caller).
   */
  async redeem(codeSha256: Buffer): Promise<AuthorizationCodeRecord | undefined> {
    const rows = await this.dataSource.query<
      [
        {
          agent_id: string;
          principal: string;
          redirect_uri: string;
          code_challenge: string;
          scopes: string[];
          resources: string[];
          expires_at: Date;
          client_id_url: string | null;
          dpop_jkt: string | null;
        }[],
        number,
      ]
    >(
      'DELETE FROM authorization_codes WHERE code_sha256 = $1 RETURNING agent_id, principal, redirect_uri, code_challenge, scopes, resources, expires_at, client_id_url, dpop_jkt',
      [codeSha256],
    );
    const row = rows[0][0];
    if (row === undefined) return undefined;
    return {
      agentId: row.agent_id,
      principal: row.principal,
      redirectUri: row.redirect_uri,
      codeChallenge: row.code_challenge,
      scopes: row.scopes,
      resources: row.resources,
      expiresAt: row.expires_at,
      clientIdUrl: row.client_id_url,
      dpopJkt: row.dpop_jkt,
    };
  }

  /**
   * Deletes at most `limit` codes whose expiry has passed at `now` (the same `<=` as the
   * grant's expiry check: such a code can never be redeemed) and returns how many went.
   * The batch is found through `authorization_codes_expires_idx`; `SKIP LOCKED` lets
   * replicas purging at the same moment, and a redemption deleting the same row, pass
   * each other instead of waiting. Redeemed codes are never here: redemption deletes them.
   */
  async purgeExpired(now: Date, limit: number): Promise<number> {
    const result = await this.dataSource.query<[unknown[], number]>(
      `DELETE FROM authorization_codes WHERE code_sha256 IN (
         SELECT code_sha256 FROM authorization_codes WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [now, limit],
    );
    return result[1];
  }
}
