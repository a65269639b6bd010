import { IsUUID } from 'class-validator';

export class ApprovalIdParam {
  @IsUUID('all', { message: 'approval id must be a UUID' })
  id!: string;
}
