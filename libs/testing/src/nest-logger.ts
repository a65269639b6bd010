import { Logger, type LoggerService } from '@nestjs/common';

/**
 * `TestingModuleBuilder.compile()` replaces Nest's process-wide static logger with its
 * `TestingLogger` (errors only). Unit specs share their worker's modules, so a spec that
 * compiles a module calls this first and the function it returns after its modules are
 * closed: the logger before is back for the next file.
 */
export function keepNestLogger(): () => void {
  const before = (Logger as unknown as { staticInstanceRef?: LoggerService }).staticInstanceRef;
  return () => {
    Logger.overrideLogger(before ?? false);
  };
}
