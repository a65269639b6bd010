import { describe, expect, it } from 'vitest';
import { formatSecret, signWebhook } from './webhook-signature';

describe('signWebhook', () => {
  // The Standard Webhooks specification's own example (standard-webhooks.md, "Signature scheme").
  it('signs "{id}.{timestamp}.{body}" as the Standard Webhooks example does', () => {
    const key = Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64');
    const body = '{"test": 2432232314}';
    expect(signWebhook(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body)).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('shows the key as whsec_ and base64', () => {
    expect(formatSecret(Buffer.from([1, 2, 3]))).toBe('whsec_AQID');
  });
});
