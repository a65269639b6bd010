import { ConfigError } from './config-error';

const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expands `${VAR}` and `${VAR:-default}` in every string of a parsed YAML tree
 * (`$$` is a literal `$`). Substituting after parsing keeps a value containing YAML
 * syntax from changing the document's structure. A referenced variable that is unset
 * and has no default is a config error naming both.
 */
export function substituteEnv(node: unknown, env: NodeJS.ProcessEnv, path: string[] = []): unknown {
  if (typeof node === 'string') return substituteString(node, env, path);
  if (Array.isArray(node)) return node.map((item, index) => substituteEnv(item, env, [...path, String(index)]));
  if (node !== null && typeof node === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) out[key] = substituteEnv(value, env, [...path, key]);
    return out;
  }
  return node;
}

function substituteString(value: string, env: NodeJS.ProcessEnv, path: string[]): string {
  return value.replace(REFERENCE, (whole: string, name: string | undefined, fallback: string | undefined) => {
    if (whole === '$$') return '$';
    const resolved = env[name as string];
    if (resolved !== undefined && resolved !== '') return resolved;
    if (fallback !== undefined) return fallback;
    throw new ConfigError(
      path.join('.'),
      `references environment variable ${name} which is not set: set it or write \${${name}:-default}`,
    );
  });
}
