// The module itself, not the `@broker/testing` index: a unit spec that uses no test server
// then loads none of the servers, browsers and providers the index brings (seconds per file).
// eslint-disable-next-line no-restricted-imports -- the setup of every test file: the one module it needs, not the whole index
import { installContractFetch } from '../libs/testing/src/contract-fetch';
// eslint-disable-next-line no-restricted-imports -- as above
import { forgetContractServers } from '../libs/testing/src/openapi-contract';
import { __resetOutOfContextForTests } from 'nestjs-pino/PinoLogger';

// Every broker answer a test receives through fetch is checked against the OpenAPI documents too.
installContractFetch();

// Files share their worker's modules (vitest.config.mts): what a module keeps for the process starts afresh for each
// file. nestjs-pino creates the logger used outside a request once per process, bound to the first file's log capture.
forgetContractServers();
__resetOutOfContextForTests();
