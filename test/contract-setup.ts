import { installContractFetch } from '@broker/testing';

// Issue 21: every broker answer a test receives through fetch is checked against the OpenAPI documents too.
installContractFetch();
