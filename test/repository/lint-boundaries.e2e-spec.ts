import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

interface CycleChecker {
  findImportCycles(roots: readonly string[], repo?: string): string[][];
}

interface CatalogueChecker {
  catalogueErrors(file?: string): string[];
}

/**
 * The lib boundaries are allow-lists the linter enforces (eslint.config.mjs,
 * docs/architecture.md "The libraries"), and import cycles count type-only imports
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

  it('fails on an event kind missing from the catalogue’s list, or listed without its details type', async () => {
    const { catalogueErrors } = (await import(
      join(process.cwd(), 'scripts/check-event-catalogue.mjs')
    )) as CatalogueChecker;
    const catalogue = readFileSync(join(process.cwd(), 'libs/events/src/catalogue/event-catalogue.ts'), 'utf8');
    const fixture = mkdtempSync(join(tmpdir(), 'catalogue-'));
    const write = (name: string, text: string): string => {
      expect(text).not.toBe(catalogue);
      writeFileSync(join(fixture, name), text);
      return join(fixture, name);
    };
    // A kind with its details type but not listed (`EVENT_KINDS`).
    const unlisted = write('unlisted.ts', catalogue.replace("\n  'grant.expired': true,", ''));
    expect(catalogueErrors(unlisted).join('\n')).toMatch(/'?"?grant\.expired"?'? is missing/);
    // A kind listed without a details type.
    const undetailed = write(
      'undetailed.ts',
      catalogue.replace("\n  'grant.expired': { readonly valid_until: string };", ''),
    );
    expect(catalogueErrors(undetailed).join('\n')).toMatch(/grant\.expired/);
    expect(catalogueErrors()).toEqual([]);
  });
});

/** The console is linted too (its own tsconfig, the React hooks rules), and every source file is formatted. */
describe('lint of the console, and formatting', () => {
  async function consoleErrors(ruleId: string, asFile: string, code: string, typed = false): Promise<string[]> {
    // Only the rule under test; the type-aware ones need the console's TypeScript program (the file must be in it).
    const eslint = new ESLint({
      cwd: process.cwd(),
      ruleFilter: (rule) => rule.ruleId === ruleId,
      // Under CI=true typescript-eslint infers a single run and types the file as it is on disk, not the text given
      // here; this lint is not a single run (each call lints other text for the same file).
      overrideConfig: {
        languageOptions: {
          parserOptions: typed ? { disallowAutomaticSingleRunInference: true } : { project: false },
        },
      },
    });
    const [result] = await eslint.lintText(code, { filePath: join(process.cwd(), asFile) });
    return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parser'}: ${m.message}`);
  }

  it('fails on a hook called conditionally in a console component', async () => {
    const component = [
      "import { useState } from 'react';",
      'export function Greeting({ show }: { show: boolean }) {',
      '  if (!show) return null;',
      "  const [name] = useState('you');",
      '  return <p>Hello {name}</p>;',
      '}',
      '',
    ].join('\n');
    const errors = await consoleErrors('react-hooks/rules-of-hooks', 'apps/console/src/Greeting.tsx', component);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/react-hooks\/rules-of-hooks: React Hook "useState" is called conditionally/);
  });

  it('fails on a floating promise in a console file', async () => {
    const code = [
      'async function save(): Promise<void> {}',
      'export function onClick(): void {',
      '  save();',
      '}',
      '',
    ].join('\n');
    // main.tsx is in the console's program: its text is replaced by this code for the lint.
    const errors = await consoleErrors(
      '@typescript-eslint/no-floating-promises',
      'apps/console/src/main.tsx',
      code,
      true,
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^@typescript-eslint\/no-floating-promises: Promises must be awaited/);
  });

  it("fails on an event kind missing from the activity page's switch", async () => {
    const file = 'apps/console/src/activity/EventRow.tsx';
    const source = readFileSync(join(process.cwd(), file), 'utf8');
    expect(await consoleErrors('@typescript-eslint/switch-exhaustiveness-check', file, source, true)).toEqual([]);
    const missing = source.replace("    case 'access_token.revoked':\n", '');
    expect(missing).not.toBe(source);
    const errors = await consoleErrors('@typescript-eslint/switch-exhaustiveness-check', file, missing, true);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/Switch is not exhaustive\. Cases not matched: "access_token\.revoked"/);
  });

  it("fails prettier --check (the repository's .prettierrc.json) on an unformatted file", () => {
    const prettier = join(process.cwd(), 'node_modules/prettier/bin/prettier.cjs');
    const config = join(process.cwd(), '.prettierrc.json');
    const dir = mkdtempSync(join(tmpdir(), 'prettier-'));
    const file = join(dir, 'wide.ts');
    // A 200-column line, and a 105-column one that is formatted at 120 columns (not at prettier's default 80).
    const wide = `export function wide(${Array.from({ length: 10 }, (_, i) => `argument${i}: string`).join(', ')}): void {}\n`;
    const fits =
      "export const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india'];\n";
    const check = (code: string) => {
      writeFileSync(file, code);
      execFileSync(process.execPath, [prettier, '--check', '--config', config, file], { stdio: 'pipe' });
    };
    expect(wide.length).toBeGreaterThan(200);
    expect(() => check(wide + fits)).toThrow(/Code style issues found/);
    expect(() => check(fits)).not.toThrow();
  });
});

/** No file cites what a reader of the repository cannot open (scripts/check-references.mjs, run by `npm run lint`). */
describe('references a reader of the repository can open', () => {
  // Citations are assembled from words, so that this file passes the check itself.
  const words = (...parts: string[]): string => parts.join(' ');
  function check(files: Readonly<Record<string, string>>): { status: number; out: string } {
    const dir = mkdtempSync(join(tmpdir(), 'references-'));
    execFileSync('git', ['init', '-q'], { cwd: dir });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    try {
      const out = execFileSync(process.execPath, [join(process.cwd(), 'scripts/check-references.mjs'), dir], {
        encoding: 'utf8',
        stdio: 'pipe',
      });
      return { status: 0, out };
    } catch (error) {
      const failed = error as { status: number; stdout: string; stderr: string };
      return { status: failed.status, out: `${failed.stdout}${failed.stderr}` };
    }
  }

  it('fails naming file and line on a document outside the repository, a path outside it or an issue number', () => {
    const outside = ['SPEC', 'md'].join('.');
    const result = check({
      'grant.ts': `export const a = 1;\n// Ordering as ${outside} "Grants" says.\n`,
      'notes.md': `# Notes\n\nSee ../${'shared'}/contract for the shapes.\n`,
      'retention.ts': `/** Purged hourly (${words('issue', '17')} item 4). */\nexport const b = 2;\n`,
      'cache.ts': `// ${words('Issue', '#19')}: never cache a refusal.\n// Fixed in ${words('issues', '16')} and 17.\n`,
      'style.md': `Layout as ${['STYLE', 'md'].join('.')} describes, the contract in ${['API', 'md'].join('.')}.\n`,
    });
    expect(result.status).toBe(1);
    expect(result.out).toContain(`grant.ts:2: "${outside}"`);
    expect(result.out).toContain('notes.md:3:');
    expect(result.out).toContain(`retention.ts:1: "${words('issue', '17')}"`);
    expect(result.out).toContain(`cache.ts:1: "${words('Issue', '#19')}"`);
    expect(result.out).toContain(`cache.ts:2: "${words('issues', '16')}"`);
    expect(result.out.match(/style\.md:1:/g)).toHaveLength(1);
    expect(result.out).toContain('6 reference(s)');
  });

  it('passes docs/ and RFC citations, and words that only look like an issue number', () => {
    const result = check({
      'grant.ts': '// Ordering: docs/consent-and-connections.md, "One grant per (principal, agent)"; RFC 6749 §5.2.\n',
      'notes.md': 'The broker issued 3 tokens, issues 2-second tokens; an issue with 2 replicas; the API documents.\n',
    });
    expect(result).toEqual({ status: 0, out: '' });
  });
});
