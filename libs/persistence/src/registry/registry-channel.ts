/**
 * The channel of committed registry changes the hot paths read from memory: token-endpoint
 * clients (agents, assignments, secrets; migration RegistryNotifications) and protected
 * resources (migration ProtectedResources). Any payload clears `ClientCache` and
 * `ResourceCatalog` whole.
 */
export const REGISTRY_CHANNEL = 'registry_changed';
