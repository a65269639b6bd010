import { EventPageQuery } from '@broker/api-shapes';
import { IsPlainText } from '@broker/http';
import { IsOptional, IsString, Length } from 'class-validator';

/** Query of `GET /api/events`: the ledger's page query, and `principal`: administrators read anyone's events. */
export class EventListQuery extends EventPageQuery {
  /** Only this person's events (the subject principal). */
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @IsPlainText()
  principal?: string;
}
