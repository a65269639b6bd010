#!/usr/bin/env node
// The console's API types (apps/console/src/api/user-api.d.ts), generated from openapi/user-api.json by
// openapi-typescript. Written to a file of this process's own, then renamed into place: the build and the lint both
// generate them, side by side in CI, and a reader (the console's compiler, ESLint) sees the old file or the new one,
// never a part.
import { spawnSync } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const TARGET = 'apps/console/src/api/user-api.d.ts';
const partial = `${TARGET}.${process.pid}.partial`;
const require = createRequire(import.meta.url);
const cli = join(dirname(require.resolve('openapi-typescript/package.json')), 'bin/cli.js');

const result = spawnSync(process.execPath, [cli, 'openapi/user-api.json', '-o', partial], { stdio: 'inherit' });
if (result.status !== 0) {
  rmSync(partial, { force: true });
  process.exit(result.status ?? 1);
}
renameSync(partial, TARGET);
