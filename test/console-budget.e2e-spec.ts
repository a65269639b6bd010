import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const DIST = resolve('dist/console');
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

describe('console budget (issue 15: initial JavaScript + CSS of the production build ≤ 150 KB gzip)', () => {
  it('keeps index.html\'s scripts and stylesheets within 150 KB gzip', () => {
    expect(existsSync(resolve(DIST, 'index.html')), 'dist/console/index.html is missing: run npm run build (npm test does it first)').toBe(true);
    const html = readFileSync(resolve(DIST, 'index.html'), 'utf8');
    const assets = initialAssets(html);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    const sizes = assets.map((asset) => {
      expect(asset, 'an initial asset is the console\'s own file').toMatch(/^\/assets\/[\w.-]+\.(js|css)$/);
      return { asset, gzip: gzipSync(readFileSync(resolve(DIST, asset.slice(1))), { level: 9 }).length };
    });
    const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
    expect(total, `initial assets (gzip bytes): ${JSON.stringify(sizes)}`).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});
