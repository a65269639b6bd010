import type { Principal } from '@broker/domain';
import type { Request } from 'express';

/** An incoming request with what the broker's middleware and guards attach to it. */
export interface BrokerRequest extends Request {
  /** W3C trace id of this request (32 hex): the correlation id in logs and error refs. */
  traceId?: string;
  /** The authenticated principal, set by the principal guard. */
  principal?: Principal;
}
