// Import cycles in apps/ and libs/, type-only imports included (import-x/no-cycle skips
// `import type`, which is how agent.repository.ts <-> client-cache.ts hid). Run by `npm run lint`.
// Usage: node scripts/check-import-cycles.mjs [root ...]  (default: apps libs); exit 1 on a cycle.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** `@broker/<lib>` → libs/<lib>/src/index.ts, as tsconfig's paths say. */
function aliasTarget(specifier, repo) {
  const match = /^@broker\/([a-z-]+)$/.exec(specifier);
  return match ? join(repo, 'libs', match[1], 'src', 'index.ts') : undefined;
}

function resolveImport(from, specifier, repo) {
  const alias = aliasTarget(specifier, repo);
  if (alias) return existsSync(alias) ? alias : undefined;
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') out.push(...sourceFiles(path));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.spec.ts')) {
      out.push(path);
    }
  }
  return out;
}

/** Every cycle (strongly connected component of two or more files, or a self-import), as repo-relative paths. */
export function findImportCycles(roots, repo = process.cwd()) {
  const files = roots.flatMap((root) => sourceFiles(resolve(repo, root)));
  const edges = new Map();
  for (const file of files) {
    const imports = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles;
    edges.set(file, [
      ...new Set(imports.map((i) => resolveImport(file, i.fileName, repo)).filter((t) => t !== undefined)),
    ]);
  }
  // Tarjan's strongly connected components, iteratively (no recursion depth limit).
  let index = 0;
  const indexes = new Map();
  const lowlinks = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  for (const start of edges.keys()) {
    if (indexes.has(start)) continue;
    const work = [[start, 0]];
    indexes.set(start, index);
    lowlinks.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, next] = frame;
      const targets = edges.get(node) ?? [];
      if (next < targets.length) {
        frame[1] += 1;
        const target = targets[next];
        if (!edges.has(target)) continue;
        if (!indexes.has(target)) {
          indexes.set(target, index);
          lowlinks.set(target, index++);
          stack.push(target);
          onStack.add(target);
          work.push([target, 0]);
        } else if (onStack.has(target)) {
          lowlinks.set(node, Math.min(lowlinks.get(node), indexes.get(target)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        lowlinks.set(parent, Math.min(lowlinks.get(parent), lowlinks.get(node)));
      }
      if (lowlinks.get(node) === indexes.get(node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        if (component.length > 1 || (edges.get(node) ?? []).includes(node))
          cycles.push(component.map((f) => relative(repo, f)).sort());
      }
    }
  }
  return cycles;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const roots = process.argv.slice(2);
  const cycles = findImportCycles(roots.length > 0 ? roots : ['apps', 'libs']);
  for (const cycle of cycles) console.error(`import cycle (type-only imports count): ${cycle.join(' <-> ')}`);
  if (cycles.length > 0) process.exit(1);
  console.log('no import cycles (type-only imports included)');
}
