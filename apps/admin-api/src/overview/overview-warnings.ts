import type { BrokerConfig } from '@broker/config';
import { isIP } from 'node:net';

/** The conditions an operator must see on the admin overview (docs/admin-api.md "Overview"). */
export type OverviewWarningCode = 'development_keys' | 'tracing_off' | 'signing_key_due' | 'discovery_allow_list_wide';

export const OVERVIEW_WARNING_CODES: readonly OverviewWarningCode[] = [
  'development_keys',
  'tracing_off',
  'signing_key_due',
  'discovery_allow_list_wide',
];

export interface OverviewWarning {
  readonly code: OverviewWarningCode;
  readonly message: string;
}

/** The current signing key, as far as the warnings care. */
export interface CurrentKey {
  readonly kid: string;
  readonly createdAt: Date;
}

const DAY_MS = 86_400_000;

/** Whole days from `since` to `now` (0 on the first day). */
export function ageDays(since: Date, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - since.getTime()) / DAY_MS));
}

/** A CIDR entirely inside loopback: 127.0.0.0/8 (or narrower), ::1, or an IPv4-mapped 127.x address. */
export function isLoopbackCidr(cidr: string): boolean {
  const [address = '', prefixText] = cidr.split('/');
  const family = isIP(address);
  const prefix = prefixText === undefined ? (family === 4 ? 32 : 128) : Number(prefixText);
  if (family === 4) return address.startsWith('127.') && prefix >= 8;
  const lower = address.toLowerCase();
  if (lower === '::1' || lower === '0:0:0:0:0:0:0:1') return prefix === 128;
  const mapped = /^(?:0:0:0:0:0:|::)ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  return mapped !== null && (mapped[1] ?? '').startsWith('127.') && prefix >= 104;
}

/** The SSRF guards' exemptions (special-use networks outbound requests may reach), by config key. */
function allowLists(config: BrokerConfig): [string, readonly string[]][] {
  return [
    ['third_party_oauth2.discovery.allowed_networks', config.third_party_oauth2.discovery.allowed_networks],
    ['oauth2_authorization_server.cimd.allowed_networks', config.oauth2_authorization_server.cimd.allowed_networks],
    ['events.webhooks.allowed_networks', config.events.webhooks.allowed_networks],
  ];
}

/**
 * What the overview warns about, from the config and the current signing key (undefined in
 * proxy mode, where the broker signs nothing). Each message says what is wrong, why it
 * matters and the key that changes it.
 */
export function overviewWarnings(
  config: BrokerConfig,
  currentKey: CurrentKey | undefined,
  now: Date,
): OverviewWarning[] {
  const warnings: OverviewWarning[] = [];
  const developmentKeys = config.development.keys_in_use;
  if (developmentKeys.length > 0) {
    warnings.push({
      code: 'development_keys',
      message:
        `Development keys in use: ${developmentKeys.join(' and ')} ${developmentKeys.length === 1 ? 'is' : 'are'} not configured, ` +
        `so the broker reads ${developmentKeys.length === 1 ? 'that key' : 'those keys'} from ${config.development.keys_file}. ` +
        'Anyone holding that file can decrypt the stored third-party tokens: configure your own keys before production.',
    });
  }
  if (!config.telemetry.tracing.enabled) {
    warnings.push({
      code: 'tracing_off',
      message:
        'Tracing is off (telemetry.tracing.enabled is false): a token exchange cannot be followed from the gateway ' +
        'through the broker to the provider in your tracing backend.',
    });
  }
  if (currentKey !== undefined) {
    const rotateAfter = config.oauth2_authorization_server.local.signing_keys.rotate_after;
    const age = now.getTime() - currentKey.createdAt.getTime();
    if (age > rotateAfter) {
      warnings.push({
        code: 'signing_key_due',
        message:
          `The current signing key ${currentKey.kid} is ${ageDays(currentKey.createdAt, now)} days old, older than ` +
          `oauth2_authorization_server.local.signing_keys.rotate_after (${Math.round(rotateAfter / DAY_MS)} days): ` +
          'add a key, make it current, and retire the old one once the tokens it signed have expired.',
      });
    }
  }
  const wide = allowLists(config)
    .map(([key, networks]) => [key, networks.filter((cidr) => !isLoopbackCidr(cidr))] as const)
    .filter(([, networks]) => networks.length > 0);
  if (wide.length > 0) {
    warnings.push({
      code: 'discovery_allow_list_wide',
      message:
        `Outbound requests may reach private networks beyond loopback: ${wide.map(([key, networks]) => `${key} allows ${networks.join(', ')}`).join('; ')}. ` +
        'An administrator or a client document could make the broker call internal services (server-side request forgery): keep these lists empty in production.',
    });
  }
  return warnings;
}
