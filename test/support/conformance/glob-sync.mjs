// `node --import ./glob-sync.mjs …/conformance/dist/index.js`: the MCP conformance runner
// (@modelcontextprotocol/conformance) imports `globSync` from `fs`, which Node 20 lacks. This gives
// the runner's process one, through a resolution hook, and changes nothing else.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
