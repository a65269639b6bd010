#!/usr/bin/env node
// Builds the broker only when its sources changed since the last successful build, so that a second `npm start`
// (or `npm run demo`) on an unchanged checkout starts at once instead of compiling for two minutes.
//
//   node scripts/build-if-stale.mjs           build when stale, otherwise say the build is current
//   node scripts/build-if-stale.mjs --stamp   record the current sources as built (the last step of `npm run build`)
//
// "The sources" are the contents (not the times: a fresh clone gives every file a new mtime) of everything under
// apps/ and libs/ plus the files that decide how they compile and what they link against. The fingerprint is a
// SHA-256 over their paths and bytes, written to dist/.build-inputs once a build has finished; `nest build` empties
// dist/ first, so a build that fails half-way leaves no fingerprint and the next start builds again.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(ROOT, 'dist/.build-inputs');
const SOURCE_DIRS = ['apps', 'libs'];
const SOURCE_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json'];
/** What `npm start` and `npm run demo` run: if any is missing the build is incomplete, whatever the fingerprint. */
const OUTPUTS = ['dist/apps/broker/src/main.js', 'dist/console/index.html', 'dist/admin-console/index.html'];
const SKIP = new Set(['node_modules', 'dist', '.vite']);

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  )) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (entry.isFile()) yield path;
  }
}

function fingerprint() {
  const hash = createHash('sha256');
  const paths = [
    ...SOURCE_DIRS.flatMap((dir) => [...files(join(ROOT, dir))]),
    ...SOURCE_FILES.map((file) => join(ROOT, file)).filter((path) => existsSync(path)),
  ];
  for (const path of paths) {
    hash.update(relative(ROOT, path)).update('\0').update(readFileSync(path)).update('\0');
  }
  return hash.digest('hex');
}

function isCurrent() {
  if (!OUTPUTS.every((output) => existsSync(join(ROOT, output)))) return false;
  if (!existsSync(STAMP)) return false;
  return readFileSync(STAMP, 'utf8').trim() === fingerprint();
}

if (process.argv.includes('--stamp')) {
  writeFileSync(STAMP, `${fingerprint()}\n`);
} else if (isCurrent()) {
  console.log(
    'build: sources unchanged since the last build, starting without rebuilding (`npm run build` forces one)',
  );
} else {
  console.log('build: sources changed or never built, building (about 40 s on two cores)…');
  const result = spawnSync('npm', ['run', 'build'], {
    cwd: ROOT,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
