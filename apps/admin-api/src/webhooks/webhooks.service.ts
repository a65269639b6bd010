import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { ApiError, Clock, Random } from '@broker/domain';
import { type EventType } from '@broker/events';
import { networkList } from '@broker/outbound';
import {
  WebhookRepository,
  type WebhookDeliveryRecord,
  type WebhookInput,
  type WebhookRecord,
} from '@broker/persistence';
import { WebhookSecrets, webhookUrlProblem } from '@broker/webhooks';
import { Inject, Injectable } from '@nestjs/common';
import type { BlockList } from 'node:net';
import type { WebhookDto } from './webhook.dto';

/** The deliveries list shows this many, newest first. */
export const DELIVERIES_SHOWN = 100;

/** A webhook and the secret shown once. */
export interface WebhookWithSecret {
  readonly webhook: WebhookRecord;
  readonly secret: string;
}

/** Webhook endpoints (admin). */
@Injectable()
export class WebhooksService {
  private readonly allowed: BlockList;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    private readonly webhooks: WebhookRepository,
    private readonly secrets: WebhookSecrets,
    private readonly clock: Clock,
    private readonly random: Random,
  ) {
    this.allowed = networkList(config.events.webhooks.allowed_networks);
  }

  list(): Promise<WebhookRecord[]> {
    return this.webhooks.list();
  }

  async get(id: string): Promise<WebhookRecord> {
    const webhook = await this.webhooks.findById(id);
    if (webhook === undefined) throw notFound(id);
    return webhook;
  }

  async create(dto: WebhookDto): Promise<WebhookWithSecret> {
    const input = await this.toInput(dto);
    const id = this.random.uuid();
    const { secret, envelope } = this.secrets.issue(id);
    return { webhook: await this.webhooks.create(id, input, envelope, this.clock.now()), secret };
  }

  async replace(id: string, dto: WebhookDto): Promise<WebhookRecord> {
    const webhook = await this.webhooks.replace(id, await this.toInput(dto), this.clock.now());
    if (webhook === undefined) throw notFound(id);
    return webhook;
  }

  /** A new secret at once: deliveries from now on (retries included) are signed with it. */
  async rotateSecret(id: string): Promise<WebhookWithSecret> {
    const { secret, envelope } = this.secrets.issue(id);
    if (!(await this.webhooks.replaceSecret(id, envelope, this.clock.now()))) throw notFound(id);
    return { webhook: await this.get(id), secret };
  }

  async delete(id: string): Promise<void> {
    if (!(await this.webhooks.delete(id))) throw notFound(id);
  }

  async deliveries(id: string): Promise<WebhookDeliveryRecord[]> {
    await this.get(id);
    return this.webhooks.deliveries(id, DELIVERIES_SHOWN);
  }

  private async toInput(dto: WebhookDto): Promise<WebhookInput> {
    const problem = await webhookUrlProblem(dto.url, this.allowed);
    if (problem !== undefined) throw new ApiError('validation failed', `url ${problem}`, [{ field: 'url', problem }]);
    const eventTypes: EventType[] = [...new Set(dto.event_types)];
    return { url: dto.url, eventTypes, enabled: dto.enabled };
  }
}

function notFound(id: string): ApiError {
  return new ApiError('not_found', `no webhook ${id}`);
}
