import type { GatewayHeaders } from '@broker/approvals';
import type { Request } from 'express';

/** The gateway's machine credentials as sent: `Authorization: Bearer`, `X-Client-Assertion`. */
export function gatewayHeaders(request: Request): GatewayHeaders {
  return {
    authorization: request.headers.authorization,
    clientAssertion: request.headersDistinct['x-client-assertion'],
  };
}
