import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { active } from './grant.repository';

/**
 * The Client ID Metadata Document clients a person consented to under their grant for an
 * agent (table `grant_clients`): the document URL and the redirect host the consent page
 * showed. Deleting the grant (revocation, an empty grant, the agent's deletion) deletes them;
 * a replaced grant keeps them; a consent older than the grant's `created_at` (an expired grant
 * created again) does not count.
 */
@Injectable()
export class GrantClientRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Remembers the consent (again: its time is renewed), in `manager`'s transaction when given. */
  async remember(
    grantId: string,
    clientIdUrl: string,
    redirectHost: string,
    now: Date,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO grant_clients (grant_id, client_id_url, redirect_host, consented_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (grant_id, client_id_url, redirect_host) DO UPDATE SET consented_at = EXCLUDED.consented_at`,
      [grantId, clientIdUrl, redirectHost, now],
    );
  }

  /**
   * Whether the principal has an active grant for the agent under which they consented to
   * this document URL and redirect host since the grant was created (one indexed lookup).
   */
  async consented(
    principal: string,
    agentId: string,
    clientIdUrl: string,
    redirectHost: string,
    now: Date,
  ): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `SELECT 1 FROM grants g JOIN grant_clients c ON c.grant_id = g.id
        WHERE g.principal = $1 AND g.agent_id = $2 AND ${active(5)}
          AND c.client_id_url = $3 AND c.redirect_host = $4 AND c.consented_at >= g.created_at`,
      [principal, agentId, clientIdUrl, redirectHost, now],
    );
    return rows.length > 0;
  }
}
