import type { OAuthErrorCode } from '@broker/domain';
import type { HeadersObject, ResponseObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * An error answer in the OAuth envelope (`OAuthError`, added to the document when it is
 * completed) restricted to `codes`, written out by the operation itself where
 * `@OAuthErrors` cannot say it: a status other than the code's usual one (authorize's 400
 * `invalid_client`), or headers.
 */
export function oauthErrorResponse(
  description: string,
  codes: readonly OAuthErrorCode[],
  headers?: HeadersObject,
): ResponseObject {
  const schema = {
    allOf: [
      { $ref: '#/components/schemas/OAuthError' },
      { type: 'object', properties: { error: { enum: [...codes].sort() } } },
    ],
  };
  return { description, content: { 'application/json': { schema } }, ...(headers === undefined ? {} : { headers }) };
}

/**
 * The same answer, plus the console's HTML page a browser gets instead (its `Accept` prefers `text/html`): same
 * status, the error named by code only (docs/security.md).
 */
export function withConsolePage(response: ResponseObject): ResponseObject {
  return {
    ...response,
    content: {
      ...response.content,
      'text/html': {
        schema: { type: 'string', description: "the console's page (a browser whose Accept prefers text/html)" },
      },
    },
  };
}
