import { IsUUID } from 'class-validator';

export class AgentIdParam {
  @IsUUID('all', { message: 'agent id must be a UUID' })
  agentId!: string;
}
