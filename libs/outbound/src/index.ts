/**
 * The broker's one outbound HTTP client: every call the broker makes to another server goes
 * through `OutboundHttp` under a declared `OutboundPolicy` (timeouts, size cap while reading,
 * redirects never followed, content types, and the SSRF address rules where the target
 * comes from outside), and fails with `OutboundHttpError`. Framework-free like `domain`:
 * there is nothing to inject, each use builds its client once from its policy.
 */
export { OutboundHttp, jsonObjectOf, type OutboundResponse, type OutboundJson } from './outbound-http';
export { OutboundHttpError, type OutboundFailure } from './outbound-http-error';
export type { OutboundPolicy, AddressGuardPolicy, Resolver } from './outbound-policy';
export { isForbiddenAddress, networkList } from './special-use-addresses';
export { metadataUrls } from './issuer-metadata-urls';
