import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SCRIPT = resolve(__dirname, '../scripts/build-if-stale.mjs');

/**
 * `npm start` builds only when the sources changed since the last build (README "Two commands"): the real script,
 * in a small checkout whose `npm run build` records each run and writes the outputs `npm start` needs.
 */
describe('scripts/build-if-stale.mjs', () => {
  let root: string;
  const builds = () => (existsSync(join(root, 'builds.log')) ? readFileSync(join(root, 'builds.log'), 'utf8').trim().split('\n').length : 0);
  const start = () => {
    const run = spawnSync(process.execPath, [join(root, 'scripts/build-if-stale.mjs')], { cwd: root, encoding: 'utf8' });
    return { status: run.status, out: run.stdout + run.stderr };
  };

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'build-if-stale-'));
    mkdirSync(join(root, 'scripts'));
    copyFileSync(SCRIPT, join(root, 'scripts/build-if-stale.mjs'));
    mkdirSync(join(root, 'apps/broker'), { recursive: true });
    mkdirSync(join(root, 'libs/core'), { recursive: true });
    writeFileSync(join(root, 'apps/broker/main.ts'), 'export const a = 1;\n');
    writeFileSync(join(root, 'libs/core/index.ts'), 'export const b = 2;\n');
    // Like `nest build`: empty dist/ first, then write the outputs (or fail half-way when FAIL_BUILD exists).
    writeFileSync(
      join(root, 'build.mjs'),
      `import { appendFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
rmSync('dist', { recursive: true, force: true });
appendFileSync('builds.log', 'build\\n');
if (existsSync('FAIL_BUILD')) process.exit(2);
mkdirSync('dist/apps/broker/src', { recursive: true });
mkdirSync('dist/console', { recursive: true });
writeFileSync('dist/apps/broker/src/main.js', '');
writeFileSync('dist/console/index.html', '');
`,
    );
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'fixture', private: true, scripts: { build: 'node build.mjs && node scripts/build-if-stale.mjs --stamp' } }));
  });

  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('builds a checkout never built, then starts without building while the sources are unchanged', () => {
    const first = start();
    expect(first.status, first.out).toBe(0);
    expect(first.out).toContain('building');
    expect(builds()).toBe(1);
    expect(existsSync(join(root, 'dist/.build-inputs'))).toBe(true);

    const second = start();
    expect(second.status, second.out).toBe(0);
    expect(second.out).toContain('sources unchanged');
    expect(builds()).toBe(1);
  });

  it('compares contents, not times: a touched file (as in a fresh clone) does not rebuild, an edited one does', () => {
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'libs/core/index.ts'), later, later);
    expect(start().status).toBe(0);
    expect(builds()).toBe(1);

    writeFileSync(join(root, 'libs/core/index.ts'), 'export const b = 3;\n');
    expect(start().out).toContain('building');
    expect(builds()).toBe(2);
    expect(start().out).toContain('sources unchanged');
    expect(builds()).toBe(2);

    writeFileSync(join(root, 'apps/broker/new-file.ts'), 'export {};\n');
    expect(start().out).toContain('building');
    expect(builds()).toBe(3);

    writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3}\n');
    expect(start().out).toContain('building');
    expect(builds()).toBe(4);
  });

  it('rebuilds when an output is missing, and after a failed build until one succeeds', () => {
    rmSync(join(root, 'dist/console/index.html'));
    expect(start().out).toContain('building');
    expect(builds()).toBe(5);

    writeFileSync(join(root, 'FAIL_BUILD'), '');
    writeFileSync(join(root, 'libs/core/index.ts'), 'export const b = 4;\n');
    const failed = start();
    expect(failed.status).not.toBe(0);
    expect(builds()).toBe(6);
    rmSync(join(root, 'FAIL_BUILD'));
    // The failed build left no fingerprint behind: the next start builds although no source changed since.
    expect(start().out).toContain('building');
    expect(builds()).toBe(7);
    expect(start().out).toContain('sources unchanged');
    expect(builds()).toBe(7);
  });
});
