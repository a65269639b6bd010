import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from './config-error';

interface StoredKey {
  id: string;
  key: string;
}

interface DevelopmentKeysFile {
  warning: string;
  encryption_key: StoredKey;
  jwe_key: StoredKey;
}

/**
 * Development keys for a broker started without `encryption.keys` or
 * `third_party_oauth2.jwe_keys`: generated once, persisted (directory 0700, file 0600)
 * so data encrypted with them survives a restart. Production must configure its own.
 */
export function loadOrCreateDevelopmentKeys(file: string): { keys: DevelopmentKeysFile; created: boolean } {
  if (existsSync(file)) {
    const mode = statSync(file).mode & 0o777;
    if ((mode & 0o077) !== 0) chmodSync(file, 0o600);
    try {
      const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<DevelopmentKeysFile>;
      if (parsed.encryption_key?.key && parsed.jwe_key?.key)
        return { keys: parsed as DevelopmentKeysFile, created: false };
    } catch {
      // fall through to the error below
    }
    throw new ConfigError(
      'development.keys_file',
      `${file} is not a valid development keys file: restore it or configure encryption.keys and third_party_oauth2.jwe_keys`,
    );
  }
  const keys: DevelopmentKeysFile = {
    warning: 'DEVELOPMENT KEYS. Never use in production: configure encryption.keys and third_party_oauth2.jwe_keys.',
    encryption_key: { id: 'dev-kek-1', key: randomBytes(32).toString('base64') },
    jwe_key: { id: 'dev-jwe-1', key: randomBytes(32).toString('base64') },
  };
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // 'wx': never overwrite a file another process created meanwhile.
  try {
    writeFileSync(file, JSON.stringify(keys, null, 2), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateDevelopmentKeys(file);
    throw new ConfigError(
      'development.keys_file',
      `cannot write ${file} (${(error as Error).message}): make its directory writable or configure the keys`,
    );
  }
  return { keys, created: true };
}
