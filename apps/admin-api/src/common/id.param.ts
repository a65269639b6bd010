import { IsUUID, Matches } from 'class-validator';

export class AgentIdParam {
  /** The agent's id. */
  @IsUUID('all', { message: 'agent id must be a UUID' })
  agentId!: string;
}

export class ServiceIdParam {
  /** The service's id. */
  @IsUUID('all', { message: 'service id must be a UUID' })
  serviceId!: string;
}

export class PermissionSetIdParam {
  /** The permission set's id. */
  @IsUUID('all', { message: 'permission set id must be a UUID' })
  permissionSetId!: string;
}

export class ResourceIdParam {
  /** The protected resource's id. */
  @IsUUID('all', { message: 'resource id must be a UUID' })
  resourceId!: string;
}

export class KidParam {
  /** The signing key's id (`kid`). */
  @Matches(/^[A-Za-z0-9._-]{1,128}$/, { message: 'kid must be 1-128 characters of A-Z a-z 0-9 . _ -' })
  kid!: string;
}
