import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { satisfies } from 'semver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts/build-if-stale.mjs');

/** What a newcomer meets first: `npm ci` on the Node version the README names, its links, a second `npm start`. */
describe('npm ci on the supported Node version', () => {
  it('installs no package whose engines exclude the Node version package.json supports (npm would warn EBADENGINE)', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { engines?: unknown }>;
    };
    const supported = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } })
      .engines.node;
    // The oldest Node the README promises (">=20.19" means 20.19.0) and the one running the tests must both satisfy every package.
    const oldest = supported
      .replace(/^>=\s*/, '')
      .split('.')
      .concat(['0', '0'])
      .slice(0, 3)
      .join('.');
    const refusing = Object.entries(lock.packages)
      .filter(
        ([path, entry]) =>
          path !== '' &&
          typeof entry.engines === 'object' &&
          entry.engines !== null &&
          typeof (entry.engines as { node?: unknown }).node === 'string',
      )
      .flatMap(([path, entry]) => {
        const range = (entry.engines as { node: string }).node;
        return [oldest, process.versions.node]
          .filter((version) => !satisfies(version, range))
          .map((version) => `${path} wants node ${range}, not ${version}`);
      });
    expect(refusing).toEqual([]);
  });
});

describe('the README', () => {
  it('links only to files inside the repository, each of which exists', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((match) => match[1] as string)
      .filter((target) => !/^(https?:|mailto:|#)/.test(target));
    expect(targets.length).toBeGreaterThan(0);
    const broken = targets.filter((target) => {
      const file = resolve(ROOT, decodeURIComponent(target.split('#')[0] ?? ''));
      return !file.startsWith(`${ROOT}/`) || !existsSync(file);
    });
    expect(broken).toEqual([]);
  });

  it('opens with a table of contents that lists every section and links only to headings', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const slug = (heading: string) =>
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-');
    const sections = [...readme.matchAll(/^## (.+)$/gm)]
      .map((match) => match[1] as string)
      .filter((title) => title !== 'Contents');
    const anchors = new Set([...readme.matchAll(/^#{2,4} (.+)$/gm)].map((match) => slug(match[1] as string)));
    const contents = /^## Contents\n([\s\S]*?)\n## /m.exec(readme)?.[1] ?? '';
    const toc = [...contents.matchAll(/\]\(#([^)]+)\)/g)].map((match) => match[1]);
    expect(sections.length).toBeGreaterThan(10);
    expect(sections.filter((title) => !toc.includes(slug(title)))).toEqual([]);
    expect(toc.filter((anchor) => !anchors.has(anchor as string))).toEqual([]);
    // The contents come before the first section of the body.
    expect(readme.indexOf('## Contents')).toBeLessThan(readme.indexOf(`## ${sections[0]}`));
  });
});

describe('the docs', () => {
  /** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens (code fences skipped). */
  const anchorsOf = (markdown: string): Set<string> =>
    new Set(
      markdown
        .replace(/^```[\s\S]*?^```/gm, '')
        .split('\n')
        .flatMap((line) => /^#{1,6} (.+)$/.exec(line)?.[1] ?? [])
        .map((heading) =>
          heading
            .trim()
            .toLowerCase()
            .replace(/[^\w\- ]/g, '')
            .replace(/ /g, '-'),
        ),
    );
  const pages = (directory: string): string[] =>
    readdirSync(join(ROOT, directory), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? pages(join(directory, entry.name))
        : entry.name.endsWith('.md')
          ? [join(directory, entry.name)]
          : [],
    );

  it('link only to files inside the repository that exist, and to headings those files have', () => {
    const files = ['README.md', ...pages('docs')];
    expect(files.length).toBeGreaterThan(10);
    const broken = files.flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1] as string)
        .filter((target) => !/^(https?:|mailto:)/.test(target))
        .filter((target) => {
          const [path = '', anchor] = target.split('#');
          const linked = path === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), decodeURIComponent(path));
          if (!linked.startsWith(`${ROOT}/`) || !existsSync(linked)) return true;
          return anchor !== undefined && linked.endsWith('.md') && !anchorsOf(readFileSync(linked, 'utf8')).has(anchor);
        })
        .map((target) => `${file}: ${target}`),
    );
    expect(broken).toEqual([]);
  });
});

describe('scripts/build-if-stale.mjs', () => {
  let root: string;
  const builds = () =>
    existsSync(join(root, 'builds.log')) ? readFileSync(join(root, 'builds.log'), 'utf8').trim().split('\n').length : 0;
  const start = () => {
    const run = spawnSync(process.execPath, [join(root, 'scripts/build-if-stale.mjs')], {
      cwd: root,
      encoding: 'utf8',
    });
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
mkdirSync('dist/admin-console', { recursive: true });
writeFileSync('dist/apps/broker/src/main.js', '');
writeFileSync('dist/console/index.html', '');
writeFileSync('dist/admin-console/index.html', '');
`,
    );
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({
        name: 'fixture',
        private: true,
        scripts: { build: 'node build.mjs && node scripts/build-if-stale.mjs --stamp' },
      }),
    );
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
