import type { BrokerConfig } from '@broker/config';
import pino, { type DestinationStream, type Logger } from 'pino';
import { redactSecrets } from './redact';

/**
 * What of an error reaches the log: its type, message, code and stack. Never its own
 * properties wholesale (a database error carries its query parameters, an HTTP client
 * error its request headers).
 */
export function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error, message: 'non-error value thrown' };
  const code = (error as { code?: unknown }).code;
  const out: Record<string, unknown> = { type: error.name, message: error.message, stack: error.stack };
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  if (error.cause instanceof Error) out.cause = serializeError(error.cause);
  return out;
}

/**
 * The process's root logger: JSON lines, secret-named fields redacted at any depth,
 * errors reduced to safe fields. `destination` lets tests capture the output.
 */
export function createLogger(config: Pick<BrokerConfig, 'log'>, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level: config.log.level,
    base: { service: 'agent-identity-broker' },
    timestamp: pino.stdTimeFunctions.isoTime,
    messageKey: 'msg',
    serializers: { err: serializeError },
    formatters: {
      level: (label) => ({ level: label }),
      log: (object) => redactSecrets(object) as Record<string, unknown>,
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
