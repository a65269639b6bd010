#!/usr/bin/env node
/**
 * Fails when a file of the repository cites something a reader of the repository cannot open:
 * a specification or style file kept outside it (by its file name), a path outside it, or an
 * issue number. Comments and docs cite a `docs/` section or an RFC section instead
 * (docs/README.md, "Conventions for these pages").
 *
 *   node scripts/check-references.mjs [directory]
 *
 * Checks every file git knows in the directory (tracked, and untracked but not ignored), except
 * the lockfile and binary files; prints `file:line: what` for each finding and exits 1, or exits
 * 0 when there is none. Plain node, no dependencies: it runs first in `npm run lint`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? process.cwd());

/** What may not be cited, each with the sentence a finding prints. Built from parts so this file passes itself. */
const RULES = [
  {
    pattern: new RegExp(`\\b(?:${['SPEC', 'API', 'STYLE'].join('|')})\\.md\\b`),
    what: 'names a document outside the repository; cite a docs/ section or an RFC section',
  },
  {
    pattern: new RegExp(`\\.\\./${'shared'}/`),
    what: 'names a path outside the repository',
  },
  {
    // The word issue (or issues) followed by a number, with or without `#`; not "issued 3", "an issue with 3"
    // or "issues 2-second tokens".
    pattern: /\bissues?\s+#?\d+(?![\w-])/i,
    what: 'cites an issue number; say what the reference meant, or cite a docs/ section',
  },
];

const SKIPPED = new Set(['package-lock.json']);

function listFiles(directory) {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: directory,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...new Set(out.split('\0').filter((path) => path.length > 0))];
}

const findings = [];
for (const path of listFiles(root)) {
  if (SKIPPED.has(path) || path.split('/').includes('node_modules')) continue;
  let bytes;
  try {
    bytes = readFileSync(join(root, path));
  } catch {
    continue; // deleted in the working tree, still in the index
  }
  if (bytes.includes(0)) continue; // binary
  const lines = bytes.toString('utf8').split('\n');
  lines.forEach((line, index) => {
    for (const rule of RULES) {
      const match = rule.pattern.exec(line);
      if (match) findings.push(`${path}:${index + 1}: "${match[0]}" ${rule.what}`);
    }
  });
}

if (findings.length > 0) {
  process.stderr.write(
    `${findings.join('\n')}\n${findings.length} reference(s) a reader of the repository cannot open\n`,
  );
  process.exit(1);
}
