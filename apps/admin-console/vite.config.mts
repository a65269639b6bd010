import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The admin console: built by `npm run build` into dist/admin-console, which the
 * admin server serves at / (docs/admin-console.md). No inline script
 * and no eval in the output: the pages run under a strict Content-Security-Policy.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/admin-console', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // The module preload polyfill is an inline script: modern browsers do not need it.
    modulePreload: { polyfill: false },
    sourcemap: false,
    // .vite/manifest.json (never served: only assets/ is): which chunks each page loads, for the budget test.
    manifest: true,
    reportCompressedSize: false,
  },
});
