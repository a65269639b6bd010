import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

/** The admin console's first page stays within 150 KB gzip, as the person's console does (test/console/console-budget.e2e-spec.ts). */
const DIST = resolve('dist/admin-console');
const BUDGET_BYTES = 150 * 1024;

/** The scripts, module preloads and stylesheets `index.html` makes the browser load before the first page renders. */
function initialAssets(html: string): string[] {
  const refs = new Set<string>();
  for (const match of html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)) refs.add(match[1] as string);
  for (const [tag] of html.matchAll(/<link\b[^>]*>/g)) {
    if (!/\brel="(stylesheet|modulepreload)"/.test(tag)) continue;
    const href = /\bhref="([^"]+)"/.exec(tag)?.[1];
    if (href !== undefined) refs.add(href);
  }
  return [...refs];
}

interface ManifestChunk {
  file: string;
  css?: string[];
  imports?: string[];
  isEntry?: boolean;
  isDynamicEntry?: boolean;
}

/** The files a chunk loads with it: itself, its CSS and, recursively, its static imports (vite's manifest). */
function closure(manifest: Record<string, ManifestChunk>, key: string, seen: Set<string>): Set<string> {
  if (seen.has(key)) return seen;
  seen.add(key);
  for (const imported of manifest[key]?.imports ?? []) closure(manifest, imported, seen);
  return seen;
}

const gzipSize = (file: string) => gzipSync(readFileSync(resolve(DIST, file)), { level: 9 }).length;

describe('admin console budget (initial JavaScript + CSS of the production build ≤ 150 KB gzip)', () => {
  it("keeps index.html's scripts and stylesheets within 150 KB gzip", () => {
    expect(
      existsSync(resolve(DIST, 'index.html')),
      'dist/admin-console/index.html is missing: run npm run build (npm test does it first)',
    ).toBe(true);
    const html = readFileSync(resolve(DIST, 'index.html'), 'utf8');
    const assets = initialAssets(html);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    const sizes = assets.map((asset) => {
      expect(asset, "an initial asset is the admin console's own file").toMatch(/^\/assets\/[\w.-]+\.(js|css)$/);
      return { asset, gzip: gzipSync(readFileSync(resolve(DIST, asset.slice(1))), { level: 9 }).length };
    });
    const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
    expect(total, `initial assets (gzip bytes): ${JSON.stringify(sizes)}`).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it("keeps every page's first load (the shared code plus that page's own chunk) within 150 KB gzip", () => {
    const manifestPath = resolve(DIST, '.vite/manifest.json');
    expect(existsSync(manifestPath), 'dist/admin-console/.vite/manifest.json is missing: run npm run build').toBe(true);
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, ManifestChunk>;
    const entry = Object.keys(manifest).find((key) => manifest[key]?.isEntry === true) as string;
    const shared = closure(manifest, entry, new Set());
    const pages = Object.keys(manifest).filter(
      (key) => manifest[key]?.isDynamicEntry === true && /^src\/[\w-]+\/\w+Page\.tsx$/.test(key),
    );
    // Every page is its own chunk: the agents, registry, activity and keys pages are not all loaded up front.
    expect(pages.length).toBeGreaterThanOrEqual(11);
    const firstLoads = pages.map((page) => {
      const files = new Set<string>();
      for (const key of closure(manifest, page, new Set(shared))) {
        const chunk = manifest[key] as ManifestChunk;
        files.add(chunk.file);
        for (const css of chunk.css ?? []) files.add(css);
      }
      return { page, gzip: [...files].reduce((sum, file) => sum + gzipSize(file), 0) };
    });
    const over = firstLoads.filter((load) => load.gzip > BUDGET_BYTES);
    expect(over, `first load per page (gzip bytes): ${JSON.stringify(firstLoads)}`).toEqual([]);
  });
});
