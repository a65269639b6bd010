import type { BrokerRuntime } from '@broker/bootstrap';
import type { DynamicModule, Type } from '@nestjs/common';
import { Test, type TestingModule, type TestingModuleBuilder } from '@nestjs/testing';
import { afterAll, beforeAll } from 'vitest';
import { keepNestLogger } from './nest-logger';
import { openTestRuntime, type TestRuntime } from './test-runtime';

type Tree = Record<string, unknown>;

/** An upstream authorization server that is never called: compiling a module fetches nothing (port 9, discard). */
export const NEVER_CALLED_UPSTREAM = 'http://127.0.0.1:9';

/**
 * The `oauth2_authorization_server` section of a mode, for a module compiled in it: proxy and
 * hybrid name an upstream (`upstream`, never called unless said), and `enterprise` trusts one
 * enterprise IdP (discovered on the first ID-JAG, never at start-up).
 */
export function modeConfig(
  mode: 'local' | 'proxy' | 'hybrid',
  options: { upstream?: string; jwksUri?: string; enterprise?: boolean } = {},
): Tree {
  const upstream = options.upstream ?? NEVER_CALLED_UPSTREAM;
  return {
    oauth2_authorization_server: {
      mode,
      ...(mode === 'local'
        ? {}
        : {
            proxy: {
              upstream_issuer_uri: upstream,
              upstream_authorize_endpoint: `${upstream}/auth`,
              upstream_token_endpoint: `${upstream}/token`,
              upstream_jwks_uri: options.jwksUri ?? `${upstream}/jwks`,
            },
          }),
      ...(options.enterprise
        ? { enterprise: { trusted_issuers: [{ issuer_uri: 'https://idp.example.com', discovery: true }] } }
        : {}),
    },
  };
}

/** Compiles the modules of one describe block over its one test runtime. */
export interface TestingModules {
  /**
   * The modules `imports` names for the runtime under `config` (merged over the test config),
   * compiled after `configure` (an `overrideProvider`, say); closed after the block.
   */
  compile(config?: Tree, configure?: (builder: TestingModuleBuilder) => TestingModuleBuilder): Promise<TestingModule>;
  /** Closes one compiled module before the block ends (it is not closed again after it). */
  close(moduleRef: TestingModule): Promise<void>;
  /** The runtime the modules are compiled over (open from the block's `beforeAll`). */
  readonly test: TestRuntime;
}

/**
 * `Test.createTestingModule` over a runtime without servers, for a describe block: registers its
 * `beforeAll` (Nest's logger kept, the runtime opened on a fresh PGlite) and `afterAll` (every
 * compiled module closed, then the runtime, then Nest's logger put back).
 */
export function testingModules(imports: (runtime: BrokerRuntime) => (DynamicModule | Type)[]): TestingModules {
  let test: TestRuntime | undefined;
  let restoreNestLogger: (() => void) | undefined;
  const compiled: TestingModule[] = [];
  beforeAll(async () => {
    restoreNestLogger = keepNestLogger();
    test = await openTestRuntime();
  });
  afterAll(async () => {
    for (const moduleRef of compiled) await moduleRef.close();
    await test?.close();
    restoreNestLogger?.();
  });
  const opened = (): TestRuntime => {
    if (test === undefined) throw new Error('testingModules: compile from a test or a beforeAll of the block');
    return test;
  };
  return {
    get test() {
      return opened();
    },
    async compile(config = {}, configure = (builder) => builder) {
      const moduleRef = await configure(
        Test.createTestingModule({ imports: imports(opened().withConfig(config)) }),
      ).compile();
      compiled.push(moduleRef);
      return moduleRef;
    },
    async close(moduleRef) {
      compiled.splice(compiled.indexOf(moduleRef), 1);
      await moduleRef.close();
    },
  };
}
