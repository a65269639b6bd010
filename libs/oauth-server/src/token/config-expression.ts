import { ConfigError } from '@broker/config';
import { CelCompileError, compileCel, type CompiledExpression } from '@broker/domain';

/** Compiles a configured CEL expression at boot; a syntax or type error stops start-up naming `key`. */
export function compileConfigExpression(key: string, expression: string, variables: string[]): CompiledExpression {
  try {
    return compileCel(expression, variables);
  } catch (error) {
    if (error instanceof CelCompileError) throw new ConfigError(key, `is not a valid CEL expression: ${error.message}`);
    throw error;
  }
}
