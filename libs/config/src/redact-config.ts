import type { BrokerConfig } from './config.types';

const SECRET_KEY = /(^key$|secret|password|token$|private)/i;

/**
 * A copy of the config safe to log: key material, secrets and the password of a
 * connection URL, and header values, are replaced by "[REDACTED]".
 */
export function redactConfig(config: BrokerConfig): unknown {
  return redact(config, '');
}

function redact(node: unknown, key: string): unknown {
  if (Buffer.isBuffer(node)) return '[REDACTED]';
  if (typeof node === 'string') {
    if (SECRET_KEY.test(key)) return '[REDACTED]';
    if (key === 'connection_url') return redactUrlPassword(node);
    return node;
  }
  if (Array.isArray(node)) return node.map((item) => redact(item, key));
  // Header values (telemetry.tracing.headers) carry API keys: only their names are logged.
  if (key === 'headers' && node !== null && typeof node === 'object')
    return Object.fromEntries(Object.keys(node).map((k) => [k, '[REDACTED]']));
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, redact(v, k)]));
  }
  return node;
}

function redactUrlPassword(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = 'REDACTED';
    return url.toString();
  } catch {
    return '[REDACTED]';
  }
}
