import type { ParsedConfig } from './config.schema';

type DeepReadonly<T> = T extends Buffer
  ? T
  : T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** A symmetric key from the config: an id and 32 key bytes. */
export interface SymmetricKey {
  readonly id: string;
  readonly key: Buffer;
}

type Resolved = Omit<ParsedConfig, 'server' | 'encryption' | 'third_party_oauth2'> & {
  server: Omit<ParsedConfig['server'], 'enduser'> & {
    enduser: Omit<ParsedConfig['server']['enduser'], 'consent_ui_url' | 'cors'> & {
      consent_ui_url: string;
      cors: { allowed_origins: string[] };
    };
  };
  encryption: { keys: SymmetricKey[]; current_key_id: string };
  third_party_oauth2: Omit<ParsedConfig['third_party_oauth2'], 'jwe_keys'> & {
    /** The first key encrypts; every key decrypts (rotation). */
    jwe_keys: SymmetricKey[];
  };
};

/**
 * The validated, defaulted, frozen configuration. Durations are milliseconds; URLs
 * carry no trailing slash; keys are decoded.
 */
export type BrokerConfig = DeepReadonly<Resolved>;

/** Which of the two servers a piece of wiring is for. */
export type ServerKind = 'enduser' | 'admin';
