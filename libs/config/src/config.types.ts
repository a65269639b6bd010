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

/** A key the config left unset, so the development keys file stands in for it. */
export type DevelopmentKeyName = 'encryption.keys' | 'third_party_oauth2.jwe_keys';

type Resolved = Omit<ParsedConfig, 'server' | 'encryption' | 'third_party_oauth2' | 'telemetry' | 'development'> & {
  server: Omit<ParsedConfig['server'], 'enduser' | 'workers'> & {
    /** Processes running both servers (`auto` resolved to the available cores); more than 1 only on PostgreSQL. */
    workers: number;
    enduser: Omit<ParsedConfig['server']['enduser'], 'consent_ui_url' | 'cors'> & {
      consent_ui_url: string;
      cors: { allowed_origins: string[] };
    };
  };
  encryption: { keys: SymmetricKey[]; current_key_id: string };
  development: ParsedConfig['development'] & {
    /** The keys read from `development.keys_file` because the config sets none (empty in production). */
    keys_in_use: DevelopmentKeyName[];
  };
  telemetry: Omit<ParsedConfig['telemetry'], 'tracing'> & {
    /** The OTLP endpoint, headers and service name resolved from the file and the OTEL_* variables. */
    tracing: Omit<ParsedConfig['telemetry']['tracing'], 'service_name'> & {
      endpoint: string | undefined;
      headers: Record<string, string>;
      service_name: string;
    };
  };
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
