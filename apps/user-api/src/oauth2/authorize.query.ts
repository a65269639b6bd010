import { applyDecorators } from '@nestjs/common';
import { ApiQuery, type ApiQueryOptions } from '@nestjs/swagger';

/**
 * The query of `GET /oauth2/authorize` (RFC 6749 §4.1.1, RFC 7636 §4.3; docs/oauth2.md,
 * "Authorize"), as the authorize strategies read it. The strategies read the raw
 * query in the spec's error order (a pipe would refuse in its own order), so these are
 * declared for the document only. A repeated parameter counts as missing; parameters the
 * broker does not know are ignored (RFC 6749 §3.1) and kept in the URL the consent page
 * resumes.
 */
const PARAMETERS: readonly ApiQueryOptions[] = [
  {
    name: 'response_type',
    required: true,
    enum: ['code'],
    description: 'Only `code` (else 400 `unsupported_response_type`).',
  },
  {
    name: 'client_id',
    required: true,
    description:
      "The agent's UUID (its internal id, not an upstream client id); in local and hybrid modes with CIMD enabled also the HTTPS URL of a client metadata document. Else 400 `invalid_client`.",
    schema: {
      anyOf: [
        { type: 'string', format: 'uuid' },
        { type: 'string', format: 'uri', pattern: '^https://' },
      ],
    },
  },
  {
    name: 'redirect_uri',
    required: true,
    description:
      'Registered on the agent (or listed in its metadata document), compared exactly except the port of a loopback IP literal (RFC 8252). Else 400 `invalid_redirect_uri`.',
    schema: { type: 'string', format: 'uri' },
  },
  {
    name: 'code_challenge',
    required: true,
    description: 'RFC 7636: BASE64URL(SHA-256(code_verifier)), 43 characters. Else 400 `invalid_request`.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
  },
  {
    name: 'code_challenge_method',
    required: true,
    enum: ['S256'],
    description: 'Only `S256` (else 400 `invalid_request`).',
  },
  {
    name: 'scope',
    required: false,
    type: String,
    description:
      "Space-delimited; each scope must be in the agent's allowed_scopes (an empty list allows all), else `error=invalid_scope` at the redirect_uri.",
  },
  {
    name: 'state',
    required: false,
    type: String,
    description: 'Opaque; returned unchanged with the code or the error at the redirect_uri.',
  },
  {
    name: 'resource',
    required: false,
    description:
      'RFC 8707, repeatable (at most 10): the resources (e.g. MCP servers) the token is for; they become its `aud`. Local mode (and local agents in hybrid mode): an absolute URI without fragment, within `oauth2_authorization_server.local.resource_indicators.allowed_resources` (exact URIs or prefixes ending in `/`; empty: any `https:` URI or `http:` on a loopback host) and, when the agent has a non-empty `allowed_resources`, within that too, else `error=invalid_target` at the redirect_uri. Proxy mode (and proxied agents): forwarded to the upstream authorization server untouched.',
    schema: { type: 'array', items: { type: 'string', format: 'uri' }, maxItems: 10 },
    style: 'form',
    explode: true,
  },
  {
    name: 'dpop_jkt',
    required: false,
    type: String,
    description:
      'RFC 9449 §10, local mode: the JWK SHA-256 thumbprint (base64url, 43 characters) of the DPoP key the code is bound to; the token request must then carry a DPoP proof made with that key. Another shape is `error=invalid_request` at the redirect_uri.',
  },
];

/** Declares the authorization request's query parameters. */
export function ApiAuthorizeQuery(): MethodDecorator {
  return applyDecorators(...PARAMETERS.map((parameter) => ApiQuery(parameter)));
}
