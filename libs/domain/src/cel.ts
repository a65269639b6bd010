import { Environment } from '@marcbachmann/cel-js';

/** A CEL expression compiled once (at boot), evaluated per request. */
export type CompiledExpression = (context: Readonly<Record<string, unknown>>) => unknown;

/** Thrown for an expression that does not parse or type-check; `message` is one line. */
export class CelCompileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CelCompileError';
  }
}

/**
 * Compiles a CEL expression over the named variables (each `dyn`; map literals may mix
 * value types). Results come back as plain JSON values: integers as numbers, maps as
 * objects.
 */
export function compileCel(expression: string, variables: readonly string[]): CompiledExpression {
  const environment = new Environment({ unlistedVariablesAreDyn: false, homogeneousAggregateLiterals: false });
  for (const name of variables) environment.registerVariable(name, 'dyn');
  let program: (context: Record<string, unknown>) => unknown;
  try {
    program = environment.parse(expression);
  } catch (error) {
    throw new CelCompileError(((error as Error).message.split('\n')[0] ?? 'invalid expression').trim());
  }
  // Type-check now (undeclared variables, wrong operand types), not on the first request.
  const checked = environment.check(expression);
  if (!checked.valid) throw new CelCompileError((checked.error?.message.split('\n')[0] ?? 'invalid expression').trim());
  return (context) => toJson(program({ ...context }));
}

function toJson(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), toJson(v)]));
  if (Array.isArray(value)) return value.map(toJson);
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v)]));
  }
  return value;
}
