import { OFFLINE_SCOPES } from '@broker/domain';
import type { EntityManager } from 'typeorm';

/** The authorization server's own scopes, which no resource offers (the refresh token's), as an SQL list. */
const OWN_SCOPES = [...OFFLINE_SCOPES].map((scope) => `'${scope}'`).join(', ');

/**
 * SQL: the grant `g` still delegates every resource and scope of the refresh token family
 * whose token is `r` and whose family row is `f` (docs/oauth2.md "Consent per MCP server").
 * Each of the family's resources must be either
 * - a registered protected resource (exactly its URI, as the authorization endpoint matches
 *   it) that the grant delegates with every scope of the family but the authorization server's
 *   own (`offline_access`), each through one of its permission sets; or
 * - when no protected resource is registered with that URI, a protected resource of a service
 *   the grant delegates (in normal form, `f.resource_keys`, as services store them).
 * A family without resources needs nothing more than its active grant. Used by the rotation
 * (so that no path that narrows a grant can forget its refresh tokens), by the end of
 * families on narrowing, and by introspection.
 */
export function familyDelegated(r: string, f: string, g: string): string {
  return `NOT EXISTS (
    SELECT 1 FROM jsonb_array_elements_text(${r}.resources) WITH ORDINALITY AS fr(uri, i)
      LEFT JOIN protected_resources fp ON fp.resource_uri = fr.uri
     WHERE CASE WHEN fp.id IS NOT NULL THEN
             NOT EXISTS (SELECT 1 FROM grant_resources fd WHERE fd.grant_id = ${g}.id AND fd.resource_id = fp.id)
             OR EXISTS (
               SELECT 1 FROM jsonb_array_elements_text(${r}.scopes) AS fs(scope)
                WHERE fs.scope NOT IN (${OWN_SCOPES})
                  AND NOT EXISTS (
                    SELECT 1 FROM grant_resources fd
                     WHERE fd.grant_id = ${g}.id AND fd.resource_id = fp.id AND fd.scopes @> jsonb_build_array(fs.scope)))
           ELSE NOT EXISTS (
             SELECT 1 FROM service_protected_resources fsp JOIN grant_delegations fgd ON fgd.service_id = fsp.service_id
              WHERE fgd.grant_id = ${g}.id AND fsp.uri = coalesce(${f}.resource_keys ->> (fr.i::int - 1), fr.uri))
           END)`;
}

/**
 * Ends the refresh token families that `families` (SQL selecting family ids; `$1` is `now`,
 * `$2`… are `values`) selects, atomically against rotations (docs/security.md "Tokens"): first
 * each family row is marked revoked, which waits for a rotation holding it to commit; then, in
 * a later statement of the same transaction (READ COMMITTED: a new snapshot, which contains
 * that rotation's successor), every token of those families is revoked, which sends
 * `token_revoked` to every replica. A rotation that comes after the first statement waits for
 * this transaction and finds its family revoked. Runs in `manager`'s transaction, or in a new
 * one. Returns how many families were still live.
 */
export async function endFamilies(
  manager: EntityManager,
  families: string,
  values: readonly unknown[],
  now: Date,
): Promise<number> {
  const end = async (within: EntityManager): Promise<number> => {
    // TypeORM answers an UPDATE with [rows, affected].
    const [ended] = await within.query<[{ id: string }[], number]>(
      `UPDATE refresh_token_families SET revoked_at = $1 WHERE revoked_at IS NULL AND id IN (${families}) RETURNING id`,
      [now, ...values],
    );
    if (ended.length === 0) return 0;
    await within.query(
      'UPDATE refresh_tokens SET revoked_at = $1 WHERE family_id = ANY($2::uuid[]) AND revoked_at IS NULL',
      [now, ended.map((row) => row.id)],
    );
    return ended.length;
  };
  return manager.queryRunner?.isTransactionActive === true ? end(manager) : manager.transaction(end);
}
