import { isHttpUrl } from '@broker/domain';
import { EVENT_TYPES, type EventType } from '@broker/events';
import { IsPlainText } from '@broker/http';
import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsString, IsUUID, MaxLength } from 'class-validator';
import { IsUri } from '../common/is-uri';

/** Body of `POST /api/webhooks` and `PUT /api/webhooks/{id}` (the secret is generated, never sent). */
export class WebhookDto {
  /**
   * Where events are POSTed: `https`, or `http` only to `events.webhooks.allowed_networks`.
   * A host that is or resolves to a loopback, private or link-local address is refused
   * unless allow-listed (and judged again at every delivery).
   */
  @ApiProperty({ example: 'https://siem.example.com/hooks/identity-broker', format: 'uri', maxLength: 2048 })
  @IsString()
  @MaxLength(2048)
  @IsPlainText()
  @IsUri(isHttpUrl)
  url!: string;

  /** The event kinds delivered, at least one, each at most once. */
  @ApiProperty({
    example: ['grant.created', 'grant.revoked', 'agent.suspended'],
    type: 'array',
    items: { type: 'string', enum: [...EVENT_TYPES] },
    minItems: 1,
    maxItems: EVENT_TYPES.length,
    uniqueItems: true,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPES.length)
  @IsIn(EVENT_TYPES, { each: true })
  event_types!: EventType[];

  /** A disabled webhook gets no new deliveries and its pending ones wait. */
  @ApiProperty({ example: true })
  @IsBoolean()
  enabled!: boolean;
}

export class WebhookIdParam {
  /** The webhook's id. */
  @IsUUID('all', { message: 'webhook id must be a UUID' })
  webhookId!: string;
}
