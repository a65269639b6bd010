import { normaliseResourceUri, RegistryError } from '@broker/domain';
import type { EntityManager } from 'typeorm';
import { ProtectedResourceEntity, ServiceEntity, ServiceProtectedResourceEntity } from './registry.entities';

/**
 * Transaction-scoped advisory lock taken by every write that adds a URI to either kind of
 * resource: a service's `protected_resources` (a third-party API the broker exchanges tokens
 * for) or a registered protected resource (one the broker issues tokens for). The two live in
 * different tables, so no unique constraint spans them; the lock makes the check-then-write of
 * one transaction see the other's committed rows (admin writes are rare: the wait is nothing).
 */
const RESOURCE_URI_LOCK_KEY = 7_316_425_029;

const EITHER_OR =
  'a URI is either a third-party API the broker exchanges tokens for (a service) or a resource the broker issues tokens for (a protected resource)';

/** Two URIs name the same resource when their normal forms are equal (`normaliseResourceUri`). */
function sameResource(uri: string): string {
  return normaliseResourceUri(uri) ?? uri;
}

async function lock(manager: EntityManager): Promise<void> {
  await manager.query('SELECT pg_advisory_xact_lock($1)', [RESOURCE_URI_LOCK_KEY]);
}

/**
 * Within the write's transaction: refuses ('resource_uri_of_other_kind') a protected
 * resource URI that a service lists among its `protected_resources`.
 */
export async function assertNotAServiceResource(manager: EntityManager, resourceUri: string): Promise<void> {
  await lock(manager);
  const row = await manager.findOne(ServiceProtectedResourceEntity, { where: { uri: sameResource(resourceUri) } });
  if (row === null) return;
  const service = await manager.findOne(ServiceEntity, {
    select: { id: true, displayName: true },
    where: { id: row.serviceId },
  });
  throw new RegistryError(
    'resource_uri_of_other_kind',
    `resource_uri ${resourceUri} is a protected resource of the service "${service?.displayName ?? row.serviceId}": ${EITHER_OR}`,
  );
}

/**
 * Within the write's transaction: refuses ('resource_uri_of_other_kind') a service's
 * `protected_resources` (stored normalised) naming a registered protected resource.
 */
export async function assertNoneARegisteredResource(
  manager: EntityManager,
  serviceUris: readonly string[],
): Promise<void> {
  if (serviceUris.length === 0) return;
  await lock(manager);
  const wanted = new Set(serviceUris);
  // The catalog is small, and the stored URIs are compared by their normal form: one read of the URIs.
  const registered = await manager.find(ProtectedResourceEntity, {
    select: { id: true, resourceUri: true, displayName: true },
  });
  const clash = registered.find((resource) => wanted.has(sameResource(resource.resourceUri)));
  if (clash === undefined) return;
  throw new RegistryError(
    'resource_uri_of_other_kind',
    `protected_resources: ${sameResource(clash.resourceUri)} is the registered protected resource "${clash.displayName}": ${EITHER_OR}`,
  );
}

/** The names of the permission sets among `ids`, for messages. */
export async function permissionSetNames(manager: EntityManager, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await manager.query<{ name: string }[]>(
    'SELECT name FROM permission_sets WHERE id = ANY($1) ORDER BY name',
    [[...ids]],
  );
  return rows.map((row) => row.name);
}
