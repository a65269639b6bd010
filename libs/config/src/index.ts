/**
 * The broker's configuration: YAML + environment, validated once at boot into a
 * typed, frozen `BrokerConfig`. Nothing outside this lib reads `process.env`.
 */
export { BROKER_CONFIG, SERVER_KIND } from './config.tokens';
export { ConfigError, CONFIG_ERROR_EXIT_CODE } from './config-error';
export type { BrokerConfig, DevelopmentKeyName, ServerKind, SymmetricKey } from './config.types';
export { loadConfig, parseConfig, CONFIG_PATH_ENV, type LoadedConfig } from './load-config';
export { redactConfig } from './redact-config';
export { parseDuration } from './duration';
export { oneOrMany, writtenPath } from './one-or-many';
export { IMPERSONATION_ROLES, type ImpersonationRole } from './impersonation.schema';
export { readTestEnvironment, type TestEnvironment } from './test-environment';
