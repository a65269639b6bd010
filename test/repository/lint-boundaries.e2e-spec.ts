import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

interface CycleChecker {
  findImportCycles(roots: readonly string[], repo?: string): string[][];
}

/**
 * The lib boundaries are allow-lists the linter enforces (eslint.config.mjs, STYLE.md
 * "Layout and dependency direction"), and import cycles count type-only imports
 * (scripts/check-import-cycles.mjs). These tests lint code that breaks each rule.
 */
describe('lint boundaries', () => {
  // The project's own config (its zones, resolver and file globs), running only the rule under test: the
  // type-aware rules (a TypeScript program over the project) and import-x/no-cycle (the whole import graph
  // from the linted file) take seconds per file and say nothing about the boundaries.
  const eslint = new ESLint({
    cwd: process.cwd(),
    ruleFilter: ({ ruleId }) => ruleId === 'import-x/no-restricted-paths',
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  });

  async function boundaryErrors(asFile: string, code: string): Promise<string[]> {
    const [result] = await eslint.lintText(code, { filePath: join(process.cwd(), asFile) });
    return (result?.messages ?? []).filter((m) => m.ruleId === 'import-x/no-restricted-paths').map((m) => m.message);
  }

  const wrongDirection: [string, string, string][] = [
    [
      'domain importing the vault',
      'libs/domain/src/index.ts',
      "import { TokenVault } from '@broker/vault';\nexport const probe = TokenVault;\n",
    ],
    [
      'config importing persistence',
      'libs/config/src/index.ts',
      "import { Database } from '@broker/persistence';\nexport const probe = Database;\n",
    ],
    [
      'persistence importing the OAuth server',
      'libs/persistence/src/index.ts',
      "import { TrustAnchor } from '@broker/oauth-server';\nexport const probe = TrustAnchor;\n",
    ],
    [
      'the vault importing the OAuth server',
      'libs/vault/src/index.ts',
      "import { TrustAnchor } from '@broker/oauth-server';\nexport const probe = TrustAnchor;\n",
    ],
    [
      'the OAuth server importing auth',
      'libs/oauth-server/src/index.ts',
      "import { PrincipalGuard } from '@broker/auth';\nexport const probe = PrincipalGuard;\n",
    ],
  ];
  for (const [name, file, code] of wrongDirection) {
    it(`fails on a wrong-direction import: ${name}`, async () => {
      const errors = await boundaryErrors(file, code);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/may import only/);
    });
  }

  it('fails on one app importing another (only apps/broker composes them)', async () => {
    const errors = await boundaryErrors(
      'apps/admin-api/src/main.ts',
      "import { UserApiServer } from '../../user-api/src/user-api.server';\nexport const probe = UserApiServer;\n",
    );
    expect(errors).toHaveLength(1);
  });

  it('accepts an allowed import', async () => {
    expect(
      await boundaryErrors(
        'libs/vault/src/index.ts',
        "import { Database } from '@broker/persistence';\nexport const probe = Database;\n",
      ),
    ).toEqual([]);
  });

  it('finds a cycle made only of type imports, and none in apps/ and libs/', async () => {
    const { findImportCycles } = (await import(join(process.cwd(), 'scripts/check-import-cycles.mjs'))) as CycleChecker;
    const fixture = mkdtempSync(join(tmpdir(), 'cycle-'));
    mkdirSync(join(fixture, 'src'));
    writeFileSync(join(fixture, 'src', 'a.ts'), "import type { B } from './b';\nexport interface A { b?: B }\n");
    writeFileSync(join(fixture, 'src', 'b.ts'), "import type { A } from './a';\nexport interface B { a?: A }\n");
    writeFileSync(join(fixture, 'src', 'c.ts'), "import type { A } from './a';\nexport type C = A;\n");
    expect(findImportCycles(['src'], fixture)).toEqual([['src/a.ts', 'src/b.ts']]);
    expect(findImportCycles(['apps', 'libs'])).toEqual([]);
  });
});
