import { ExpressAdapter } from '@nestjs/platform-express';
import type { Response } from 'express';

/**
 * Nest's Express adapter, except that a redirect (`@Redirect()`) is only its status and
 * `Location`: no "Found. Redirecting to …" note repeating the URL (which can carry a
 * `session_token` or an authorization code) in a body no client reads. The OpenAPI
 * documents describe redirects so: a `Location` header, no content.
 */
export class BrokerExpressAdapter extends ExpressAdapter {
  override redirect(response: Response, statusCode: number, url: string): void {
    response.status(statusCode).location(url).end();
  }
}
