import { MAX_LONG_POLL_SECONDS, MIN_LONG_POLL_SECONDS } from '@broker/approvals';
import { ClientAuthenticated } from '@broker/auth';
import { ApiErrors, ValidationVocabulary } from '@broker/http';
import { Controller, Get, Param, Req, Res, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiNotModifiedResponse, ApiOkResponse, ApiParam, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { Request, Response } from 'express';
import { GatewayAuthGuard, GatewayOperation } from '../approvals/gateway-auth.guard';
import { AuthorizationRequestStateResponse, toAuthorizationRequestState } from './authorization-request.response';
import { AuthorizationRequestWait, statusEtag } from './authorization-request-wait';

const STATE_HEADERS: HeadersObject = {
  ETag: {
    description: 'the status, quoted (`"pending"`): send it back in `If-None-Match` to wait for a change',
    schema: { type: 'string', enum: ['"pending"', '"completed"', '"denied"', '"expired"'] },
  },
  'Cache-Control': { description: 'never cached by intermediaries', schema: { type: 'string', enum: ['no-store'] } },
};

/**
 * The gateway's wait on an authorization request (docs/authorization-requests.md): it
 * retries the token exchange when the request is `completed`. The gateway authenticates
 * with its client assertion alone, authorized by the token exchange's expression.
 */
@ApiTags('authorization-requests')
@Controller('api/authorization-requests')
@ClientAuthenticated()
@UseGuards(GatewayAuthGuard)
@ValidationVocabulary('bad request')
export class AuthorizationRequestsGatewayController {
  constructor(private readonly waits: AuthorizationRequestWait) {}

  /**
   * The request's state. With `If-None-Match: "pending"` it long-polls: it answers when the
   * status changes, or 304 after `X-Long-Poll-Timeout` seconds; a request reaching its
   * expiry meanwhile is answered `expired` then. The client assertion goes in
   * `X-Client-Assertion` or as `Authorization: Bearer`, authorized by
   * `token_exchange.authorization.cel.expression` (else 403).
   */
  @Get(':id/state')
  @GatewayOperation('authorization_wait')
  @ApiSecurity('ClientAssertion')
  @ApiParam({ name: 'id', description: 'the authorization request (a malformed id is 400)' })
  @ApiHeader({
    name: 'If-None-Match',
    required: false,
    description: 'the status the gateway holds, quoted (`"pending"`): wait for a change',
  })
  @ApiHeader({
    name: 'X-Long-Poll-Timeout',
    required: false,
    description: 'seconds to wait for a change (default approvals.sync.default_timeout)',
    schema: { type: 'integer', minimum: MIN_LONG_POLL_SECONDS, maximum: MAX_LONG_POLL_SECONDS },
  })
  @ApiOkResponse({ type: AuthorizationRequestStateResponse, description: 'the current state', headers: STATE_HEADERS })
  @ApiNotModifiedResponse({
    description:
      'still pending at the timeout (or the server is shutting down: `Connection: close`), or If-None-Match already named the final status',
    headers: STATE_HEADERS,
  })
  @ApiErrors('bad request', 'unauthorized', 'forbidden', 'not_found')
  async state(@Param('id') id: string, @Req() request: Request, @Res() response: Response): Promise<void> {
    const gone = new AbortController();
    response.once('close', () => gone.abort());
    const answer = await this.waits.wait({
      id,
      ifNoneMatch: request.headers['if-none-match'],
      longPollTimeout: request.headers['x-long-poll-timeout'] as string | undefined,
      signal: gone.signal,
    });
    if (answer.kind === 'aborted') return;
    response.setHeader('Cache-Control', 'no-store');
    if (answer.kind === 'state') {
      response.setHeader('ETag', statusEtag(answer.record.status));
      response.status(200).json({ data: toAuthorizationRequestState(answer.record) });
      return;
    }
    response.setHeader('ETag', statusEtag(answer.status));
    if (answer.closing) response.setHeader('Connection', 'close');
    response.status(304).end();
  }
}
