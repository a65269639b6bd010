// Node's `fs` as it is, plus `globSync` (Node 22+), which the conformance runner imports by name;
// the `glob` package's `globSync` has the same signature. Only the runner's imports are sent here.
export * from 'node:fs';
export { default } from 'node:fs';
export { globSync } from 'glob';
