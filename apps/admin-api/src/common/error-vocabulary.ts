import { RegistryError } from '@broker/domain';
import { answersTo, ErrorVocabulary } from '@broker/http';
import { KeyManagementError } from '@broker/oauth-server';

/**
 * The admin API's one vocabulary: each library refusal its routes can meet, and the wire
 * code it is answered with (codes are chosen at the edge: docs/architecture.md, "Errors").
 * The exception filter consults it; services throw the library's error as it is. Messages
 * pass through unchanged: docs/admin-api.md states them, and they name only what the admin sent.
 */
export const ADMIN_ERROR_VOCABULARY = new ErrorVocabulary([
  answersTo(RegistryError, {
    // 409: the write collides with, or is still needed by, another registry row.
    duplicate_canonical_id: 'conflict',
    resource_owned_by_other_service: 'conflict',
    service_in_use: 'conflict',
    duplicate_permission_set_name: 'conflict',
    permission_set_in_use: 'conflict',
    duplicate_resource_uri: 'conflict',
    resource_uri_of_other_kind: 'conflict',
    resource_in_use: 'conflict',
    resource_scope_in_use: 'conflict',
    // 400: a reference the admin sent vanished between validation and the write.
    permission_set_missing: 'validation failed',
    service_missing: 'validation failed',
    resource_missing: 'validation failed',
    resource_scope_not_offered: 'validation failed',
  }),
  answersTo(KeyManagementError, {
    agent_missing: 'agent not found',
    client_credentials_missing: 'client credentials not found',
    signing_key_missing: 'signing key not found',
    // 409: the key set must keep a key to sign with.
    last_signing_key: 'last_key',
    current_signing_key: 'current_key',
  }),
]);
