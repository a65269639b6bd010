#!/usr/bin/env node
// `npm run bench`: the benchmarks; numbers go to bench/RESULTS.md by hand, with the machine.
//
//   npm run bench                                          build, bench/run.mjs, then the vitest `measure` project
//   npm run bench -- --against <git ref> [--profile] [--keep]
//
// With --against, the ref is checked out in a temporary git worktree and built there, and
// bench/compare.against.ts (vitest project `against`) loads this checkout's broker, the ref's
// broker and the bare reference server in turn with the token exchange and client_credentials,
// then the two brokers with the refresh token grant and introspection, in one run, and prints
// the ratios. --profile prints CPU time per request by step instead of throughput (the token
// exchange and client_credentials only); --keep leaves the worktree in place (its path is
// printed). The worktree is removed otherwise, also after a failure or Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, unlinkSync, symlinkSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const VITEST = join(ROOT, 'node_modules/.bin/vitest');
const ENTRY = 'dist/apps/broker/src/main.js';
const USAGE = `usage: npm run bench [-- --against <git ref> [--profile] [--keep]]

  (no options)       build, run bench/run.mjs, then the vitest 'measure' project
  --against <ref>    build <ref> in a temporary git worktree and compare it with this
                     checkout's build and the bare reference server, in one run
  --profile          with --against: CPU time per request by step (node --cpu-prof)
                     instead of req/s and p99
  --keep             with --against: leave the worktree in place and print its path
  -h, --help         this text`;

/** A failure with its own message and exit status (no stack trace printed). */
class Failure extends Error {
  constructor(message, status = 1) {
    super(message);
    this.status = status;
  }
}

function usageError(message) {
  console.error(`bench: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parse(args) {
  try {
    return parseArgs({
      args,
      options: {
        against: { type: 'string' },
        profile: { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    return usageError(error.message);
  }
}

// The child running now, and the signal that interrupted us, if any. Ctrl-C already reaches
// the child (same foreground process group), so SIGINT is not sent a second time: vitest
// stops its servers and PostgreSQL cleanly on the first. SIGTERM and SIGHUP, which may have
// been sent to this process alone, are passed on. Either way this process waits for the
// child to end, then removes the worktree.
let current;
let interrupted;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    interrupted ??= signal;
    if (signal !== 'SIGINT') current?.kill(signal);
  });
}

function checkInterrupted() {
  if (interrupted !== undefined)
    throw new Failure(`bench: interrupted (${interrupted})`, 128 + constants.signals[interrupted]);
}

/** Runs a command with this terminal; resolves with its exit status (128 + signal number if killed). */
function run(command, args, { cwd = ROOT, env = process.env } = {}) {
  checkInterrupted();
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: 'inherit' });
    current = child;
    child.once('error', (error) => {
      current = undefined;
      fail(new Failure(`bench: cannot run ${command}: ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      current = undefined;
      done(code ?? 128 + (constants.signals[signal] ?? 0));
    });
  });
}

/** `run`, failing with the command's status unless it succeeded. */
async function step(what, command, args, options) {
  const status = await run(command, args, options);
  checkInterrupted();
  if (status !== 0) throw new Failure(`bench: ${what} failed (exit status ${status})`, status);
}

function git(args) {
  return spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
}

/** The full commit id of `ref`, or exit 2 when it names no commit here. */
function resolveRef(ref) {
  const unknown = () => {
    console.error(`bench: unknown git ref '${ref}': not a commit in ${ROOT}`);
    process.exit(2);
  };
  // A leading dash would be read as an option of git rev-parse.
  if (ref === '' || ref.startsWith('-')) return unknown();
  const found = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (found.status !== 0) return unknown();
  return found.stdout.trim();
}

/**
 * The environment for commands run inside the worktree: what npm set for this checkout's
 * script (its package, its node_modules/.bin first on PATH) is dropped, so the ref's own
 * tools and package are used there.
 */
function worktreeEnvironment() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(package|lifecycle)_/.test(key) || key === 'npm_config_local_prefix' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  const ownBin = join(ROOT, 'node_modules/.bin');
  env.PATH = (env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => resolve(entry || '.') !== ownBin)
    .join(delimiter);
  return env;
}

/** node_modules for the worktree: this checkout's when the lock files are byte-identical, else a clean install. */
async function installDependencies(dir, label, env) {
  const ours = join(ROOT, 'package-lock.json');
  const theirs = join(dir, 'package-lock.json');
  if (!existsSync(theirs))
    throw new Failure(`bench: ${label} has no package-lock.json: cannot install its dependencies`);
  if (existsSync(ours) && readFileSync(ours).equals(readFileSync(theirs))) {
    console.log(`bench: ${label} has the same package-lock.json: using this checkout's node_modules`);
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    return;
  }
  console.log(`bench: ${label} has a different package-lock.json: npm ci in the worktree`);
  await step(`npm ci for ${label}`, 'npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, env });
}

/** Removes the worktree; a failure here is reported but does not change the exit status. */
function removeWorktree(dir) {
  // The node_modules link goes first, so nothing can ever reach through it into this checkout's.
  const link = join(dir, 'node_modules');
  try {
    if (lstatSync(link).isSymbolicLink()) unlinkSync(link);
  } catch {
    // no node_modules (yet)
  }
  const removed = git(['worktree', 'remove', '--force', dir]);
  if (removed.status === 0) return;
  console.error(`bench: git worktree remove ${dir} failed: ${removed.stderr.trim()}; deleting the directory`);
  rmSync(dir, { recursive: true, force: true });
  git(['worktree', 'prune']);
}

async function against({ against: ref, profile, keep }) {
  const sha = resolveRef(ref);
  const short = git(['rev-parse', '--short', sha]).stdout.trim() || sha.slice(0, 7);
  const label = ref === short || sha.startsWith(ref) ? short : `${short} (${ref})`;
  await step('npm run build', 'npm', ['run', 'build']);
  const dir = mkdtempSync(join(tmpdir(), 'broker-bench-against-'));
  let status = 1;
  try {
    console.log(`bench: worktree of ${label} in ${dir}`);
    await step(`git worktree add ${dir}`, 'git', ['worktree', 'add', '--detach', dir, sha]);
    const env = worktreeEnvironment();
    await installDependencies(dir, label, env);
    // Only the server is needed, whatever else the ref's build script does.
    const nest = join(dir, 'node_modules/.bin/nest');
    if (!existsSync(nest)) throw new Failure(`bench: ${label} has no node_modules/.bin/nest: cannot build it`);
    console.log(`bench: nest build in the worktree of ${label}`);
    await step(`nest build of ${label}`, nest, ['build'], { cwd: dir, env });
    if (!existsSync(join(dir, ENTRY))) throw new Failure(`bench: nest build of ${label} wrote no ${ENTRY}`);
    const benchEnv = { ...process.env, BENCH_AGAINST_DIR: dir, BENCH_AGAINST_REF: label };
    if (profile) benchEnv.BENCH_PROFILE = '1';
    else delete benchEnv.BENCH_PROFILE;
    status = await run(VITEST, ['run', '--project', 'against'], { env: benchEnv });
    checkInterrupted();
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    console.error(error.message);
    status = error.status;
  } finally {
    if (keep)
      console.log(
        `bench: the worktree of ${label} stays in ${dir} (remove it with: git worktree remove --force ${dir})`,
      );
    else removeWorktree(dir);
  }
  return status;
}

/** What `npm run bench` always did: build, bench/run.mjs, the `measure` project, stopping at the first failure. */
async function everything() {
  await step('npm run build', 'npm', ['run', 'build']);
  await step('bench/run.mjs', process.execPath, [join(ROOT, 'bench/run.mjs')]);
  return run(VITEST, ['run', '--project', 'measure']);
}

const options = parse(process.argv.slice(2));
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
if (options.against === undefined && (options.profile || options.keep))
  usageError('--profile and --keep go with --against <git ref>');
try {
  process.exit(options.against === undefined ? await everything() : await against(options));
} catch (error) {
  if (!(error instanceof Failure)) throw error;
  console.error(error.message);
  process.exit(error.status);
}
