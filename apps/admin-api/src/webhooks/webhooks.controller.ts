import { ApiErrors, NoBody } from '@broker/http';
import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { WebhookDto, WebhookIdParam } from './webhook.dto';
import {
  toWebhookDeliveryResponse,
  toWebhookResponse,
  toWebhookWithSecretResponse,
  WebhookDeliveryResponse,
  WebhookResponse,
  WebhookWithSecretResponse,
} from './webhook.response';
import { WebhooksService } from './webhooks.service';

/** The secret is in the answer: no cache may keep it (RFC 9111 §5.2.2.5). */
const NO_STORE = {
  'Cache-Control': { description: 'always `no-store`', schema: { type: 'string', enum: ['no-store'] } },
};

/** Webhook endpoints that receive ledger events, signed (Standard Webhooks). */
@ApiTags('webhooks')
@ApiSecurity('PrincipalHeader')
@Controller('api/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  /** List all webhooks, as a bare array, never their secrets. */
  @Get()
  @ApiOkResponse({ type: [WebhookResponse] })
  async list(): Promise<WebhookResponse[]> {
    return (await this.webhooks.list()).map(toWebhookResponse);
  }

  /**
   * Create a webhook. The answer carries its signing secret (`whsec_…`), shown this once.
   * 400 `validation failed` for a URL that is not https (http only to allow-listed
   * networks) or whose host is or resolves to a loopback, private or link-local address
   * not in `events.webhooks.allowed_networks`.
   */
  @Post()
  @Header('Cache-Control', 'no-store')
  @ApiCreatedResponse({ type: WebhookWithSecretResponse, headers: NO_STORE })
  @ApiErrors('validation failed')
  async create(@Body() body: WebhookDto): Promise<WebhookWithSecretResponse> {
    const { webhook, secret } = await this.webhooks.create(body);
    return toWebhookWithSecretResponse(webhook, secret);
  }

  /** Read one webhook, never its secret. */
  @Get(':webhookId')
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors('not_found')
  async get(@Param() { webhookId }: WebhookIdParam): Promise<WebhookResponse> {
    return toWebhookResponse(await this.webhooks.get(webhookId));
  }

  /** Replace a webhook's URL, event types and enabled; the secret stays (rotate it with `POST …/secret`). */
  @Put(':webhookId')
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors('not_found', 'validation failed')
  async replace(@Param() { webhookId }: WebhookIdParam, @Body() body: WebhookDto): Promise<WebhookResponse> {
    return toWebhookResponse(await this.webhooks.replace(webhookId, body));
  }

  /** Delete a webhook and its deliveries (pending ones are not sent). */
  @Delete(':webhookId')
  @NoBody()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiErrors('not_found')
  remove(@Param() { webhookId }: WebhookIdParam): Promise<void> {
    return this.webhooks.delete(webhookId);
  }

  /** Rotate the signing secret: the new one, shown this once, signs every delivery from now on (retries included). */
  @Post(':webhookId/secret')
  @NoBody()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOkResponse({ type: WebhookWithSecretResponse, headers: NO_STORE })
  @ApiErrors('not_found')
  async rotateSecret(@Param() { webhookId }: WebhookIdParam): Promise<WebhookWithSecretResponse> {
    const { webhook, secret } = await this.webhooks.rotateSecret(webhookId);
    return toWebhookWithSecretResponse(webhook, secret);
  }

  /** The webhook's latest 100 deliveries, newest first: pending (with the next attempt), delivered and failed. */
  @Get(':webhookId/deliveries')
  @ApiOkResponse({ type: [WebhookDeliveryResponse] })
  @ApiErrors('not_found')
  async deliveries(@Param() { webhookId }: WebhookIdParam): Promise<WebhookDeliveryResponse[]> {
    return (await this.webhooks.deliveries(webhookId)).map(toWebhookDeliveryResponse);
  }
}
