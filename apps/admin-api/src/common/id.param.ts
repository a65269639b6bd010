import { IsUUID, Matches } from 'class-validator';

export class AgentIdParam {
  @IsUUID('all', { message: 'agent id must be a UUID' })
  agentId!: string;
}

export class ServiceIdParam {
  @IsUUID('all', { message: 'service id must be a UUID' })
  serviceId!: string;
}

export class PermissionSetIdParam {
  @IsUUID('all', { message: 'permission set id must be a UUID' })
  permissionSetId!: string;
}

export class KidParam {
  @Matches(/^[A-Za-z0-9._-]{1,128}$/, { message: 'kid must be 1-128 characters of A-Z a-z 0-9 . _ -' })
  kid!: string;
}
