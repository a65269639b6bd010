import { Public } from '@broker/auth';
import { ApiErrors } from '@broker/http';
import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { MetricsScrape } from './metrics-scrape.service';

@ApiTags('metrics')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly scrapes: MetricsScrape) {}

  /**
   * Prometheus scrape (text exposition format 0.0.4). No principal header: answered only to
   * peers inside the admin server's `trusted_sources` (403 otherwise); 404 when metrics are disabled.
   */
  @Public()
  @Get()
  @ApiProduces('text/plain')
  @ApiOkResponse({
    description: 'The metrics in the Prometheus text format',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  @ApiErrors('forbidden', 'not_found')
  async scrape(@Req() request: Request, @Res() response: Response): Promise<void> {
    const { contentType, body } = await this.scrapes.answer(request.socket.remoteAddress);
    // Written as is: Express's `send` would reorder the content type's parameters.
    response
      .writeHead(200, {
        'content-type': contentType,
        'cache-control': 'no-store',
        'content-length': Buffer.byteLength(body),
      })
      .end(body);
  }
}
