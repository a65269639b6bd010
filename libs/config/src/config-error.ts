/**
 * An invalid configuration. `toString()` is the one line printed before start-up
 * stops with exit code 2: it names the key and the fix.
 */
export class ConfigError extends Error {
  constructor(
    readonly key: string,
    readonly problem: string,
  ) {
    super(`config error: ${key ? `${key} ` : ''}${problem}`);
    this.name = 'ConfigError';
  }
}

/** Exit code of a start-up stopped by a config error. */
export const CONFIG_ERROR_EXIT_CODE = 2;
