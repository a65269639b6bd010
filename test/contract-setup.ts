// The module itself, not the `@broker/testing` index: a unit spec that uses no test server
// then loads none of the servers, browsers and providers the index brings (seconds per file).
// eslint-disable-next-line no-restricted-imports -- the setup of every test file: the one module it needs, not the whole index
import { installContractFetch } from '../libs/testing/src/contract-fetch';

// Every broker answer a test receives through fetch is checked against the OpenAPI documents too.
installContractFetch();
