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

interface CelNode {
  readonly op: string;
  readonly args: unknown;
}

function isNode(value: unknown): value is CelNode {
  return value !== null && typeof value === 'object' && typeof (value as { op?: unknown }).op === 'string';
}

/**
 * The variables and first-level fields an expression reads (`subject_token`,
 * `subject_token.email`), from its syntax tree: string literals that merely spell a name
 * do not count. Used to check at boot that a rule's predicate looks at what it must bind.
 */
export function celReferences(expression: string): Set<string> {
  const environment = new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false });
  let root: unknown;
  try {
    root = (environment.parse(expression) as unknown as { ast: unknown }).ast;
  } catch (error) {
    throw new CelCompileError(((error as Error).message.split('\n')[0] ?? 'invalid expression').trim());
  }
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isNode(value)) return;
    if (value.op === 'id' && typeof value.args === 'string') found.add(value.args);
    if ((value.op === '.' || value.op === '.?') && Array.isArray(value.args)) {
      const [target, field] = value.args as [unknown, unknown];
      if (isNode(target) && target.op === 'id' && typeof target.args === 'string' && typeof field === 'string')
        found.add(`${target.args}.${field}`);
    }
    visit(value.args);
  };
  visit(root);
  return found;
}
