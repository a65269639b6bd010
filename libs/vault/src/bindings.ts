/**
 * Associated-data bindings of every sealed value: owner and purpose, so a ciphertext
 * copied to another row or column fails to open. Principals may contain any character,
 * so they are URI-encoded.
 */
export const bindings = {
  clientSecret: (serviceId: string): string => `service:${serviceId}:client_secret`,
  signingKey: (kid: string): string => `signing_key:${kid}:private_key`,
  sessionToken: (serviceId: string, principal: string, kind: 'access_token' | 'refresh_token'): string =>
    `third_party_session:${serviceId}:${encodeURIComponent(principal)}:${kind}`,
  webhookSecret: (webhookId: string): string => `webhook:${webhookId}:secret`,
} as const;
