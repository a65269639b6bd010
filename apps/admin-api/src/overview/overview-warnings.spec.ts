import { testConfig } from '@broker/testing';
import { describe, expect, it } from 'vitest';
import { ageDays, isLoopbackCidr, overviewWarnings } from './overview-warnings';

const NOW = new Date('2026-06-01T12:00:00.000Z');
const DAY_MS = 86_400_000;

describe('overview warnings', () => {
  it('tells loopback-only CIDRs from wider ones', () => {
    for (const cidr of ['127.0.0.1/32', '127.0.0.0/8', '127.0.0.1', '::1/128', '::1', '::ffff:127.0.0.1/128'])
      expect(isLoopbackCidr(cidr), cidr).toBe(true);
    for (const cidr of ['10.0.0.0/8', '0.0.0.0/0', '126.0.0.0/7', '::/0', '::1/127', 'fc00::/7', '::ffff:10.0.0.1'])
      expect(isLoopbackCidr(cidr), cidr).toBe(false);
  });

  it('counts whole days', () => {
    expect(ageDays(new Date(NOW.getTime() - DAY_MS + 1), NOW)).toBe(0);
    expect(ageDays(new Date(NOW.getTime() - 90 * DAY_MS), NOW)).toBe(90);
  });

  it('warns about the signing key only past rotate_after', () => {
    const config = testConfig({ 'oauth2_authorization_server.local.signing_keys.rotate_after': '30d' });
    const codes = (createdAt: Date) =>
      overviewWarnings(config, { kid: 'k1', createdAt }, NOW).map((warning) => warning.code);
    expect(codes(new Date(NOW.getTime() - 30 * DAY_MS))).not.toContain('signing_key_due');
    expect(codes(new Date(NOW.getTime() - 30 * DAY_MS - 1))).toContain('signing_key_due');
    expect(overviewWarnings(config, undefined, NOW).map((warning) => warning.code)).toEqual(['tracing_off']);
  });

  it('names each allow-list wider than loopback, and the networks beyond it', () => {
    const config = testConfig({
      oauth2_authorization_server: { cimd: { allowed_networks: ['127.0.0.1/32', '192.168.0.0/16'] } },
      events: { webhooks: { allowed_networks: ['0.0.0.0/0'] } },
    });
    const wide = overviewWarnings(config, undefined, NOW).find((w) => w.code === 'discovery_allow_list_wide');
    expect(wide?.message).toContain(
      'oauth2_authorization_server.cimd.allowed_networks allows 192.168.0.0/16; events.webhooks.allowed_networks allows 0.0.0.0/0.',
    );
    expect(wide?.message).not.toContain('third_party_oauth2.discovery');
  });
});
