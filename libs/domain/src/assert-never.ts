/**
 * Compile-time exhaustiveness check for `switch` statements over string unions.
 * Reaching it at run time means a value escaped the type system; it throws so the
 * error filter answers 500 instead of silently continuing.
 */
export function assertNever(value: never, context = 'value'): never {
  throw new Error(`unexpected ${context}: ${JSON.stringify(value)}`);
}
