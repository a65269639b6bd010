// A module resolution hook (node:module `register`): the conformance runner's `fs` imports resolve
// to `fs` with `globSync` (fs-with-glob-sync.mjs); every other import, and every other importer's, is
// left to Node.
const SHIM = new URL('./fs-with-glob-sync.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL?.includes('/node_modules/@modelcontextprotocol/conformance/')
  ) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}
