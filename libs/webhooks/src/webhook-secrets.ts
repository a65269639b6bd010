import { Random } from '@broker/domain';
import { bindings, EnvelopeCipher } from '@broker/vault';
import { Injectable } from '@nestjs/common';
import { formatSecret } from './webhook-signature';

/** Key bytes of a webhook secret (256 bits, as Standard Webhooks suggests: 24 to 64 bytes). */
const KEY_BYTES = 32;

/** A new secret: what the admin is shown once, and what is stored. */
export interface IssuedWebhookSecret {
  /** `whsec_…`: shown once, in the answer that created it. */
  readonly secret: string;
  /** The key sealed for this webhook (`webhooks.secret_envelope`). */
  readonly envelope: Buffer;
}

/**
 * Webhook signing secrets, sealed at rest like service client secrets
 * (the vault's envelope cipher; the binding names the webhook, so an envelope copied to
 * another row fails to open; `bindings.webhookSecret`, which KEK rotation rewraps with the
 * rest) and opened only to sign a delivery.
 */
@Injectable()
export class WebhookSecrets {
  constructor(
    private readonly cipher: EnvelopeCipher,
    private readonly random: Random,
  ) {}

  issue(webhookId: string): IssuedWebhookSecret {
    const key = this.random.bytes(KEY_BYTES);
    try {
      return { secret: formatSecret(key), envelope: this.cipher.encrypt(key, bindings.webhookSecret(webhookId)) };
    } finally {
      key.fill(0);
    }
  }

  /** The key bytes (the caller zeroes them after signing); `VaultError` when the envelope does not open. */
  open(webhookId: string, envelope: Buffer): Buffer {
    return this.cipher.decrypt(envelope, bindings.webhookSecret(webhookId));
  }
}
