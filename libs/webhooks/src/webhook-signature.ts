import { createHmac } from 'node:crypto';

/** The Standard Webhooks secret prefix: `whsec_` then the key's bytes in base64. */
export const SECRET_PREFIX = 'whsec_';

/** The secret as shown to the admin (once): `whsec_<base64 of the key>`. */
export function formatSecret(key: Buffer): string {
  return `${SECRET_PREFIX}${key.toString('base64')}`;
}

/**
 * Standard Webhooks "Verifying webhook authenticity": `v1,` then the base64 HMAC-SHA256,
 * keyed with the secret's bytes, of `{webhook-id}.{webhook-timestamp}.{body}`.
 */
export function signWebhook(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The three Standard Webhooks headers of one attempt (`timestamp` in unix seconds). */
export function webhookHeaders(key: Buffer, id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(key, id, timestamp, body),
  };
}
