import { ApiProperty } from '@nestjs/swagger';

/** An agent of the caller's activity, by name, whether or not the caller still allows it. */
export class HistoryAgentView {
  @ApiProperty({ format: 'uuid' })
  agent_id!: string;
  display_name!: string;
  /** The caller has an active grant for the agent now; false once revoked or expired (its history stays). */
  allowed!: boolean;
}

/** A scope of an MCP server, described for people as the consent page shows it. */
export class ResourceScopeView {
  scope!: string;
  description!: string;
}

/** A registered MCP server (protected resource): its name for the address events carry, and its scopes in words. */
export class NamedResourceView {
  @ApiProperty({ format: 'uuid' })
  id!: string;
  @ApiProperty({ format: 'uri' })
  resource_uri!: string;
  display_name!: string;
  scopes!: ResourceScopeView[];
}

/** The names the caller's activity refers to by id or address. */
export class ActivityNamesView {
  /** Every agent in the caller's activity that still exists, by display name; an agent deleted since is absent. */
  agents!: HistoryAgentView[];
  /**
   * The registered MCP servers (the registry's names and scope descriptions, the same the consent page shows);
   * events name them by address (`resource`) or id (`resource_ids`).
   */
  resources!: NamedResourceView[];
}

/** Answer of `GET /api/activity/names`. */
export class ActivityNamesResponse {
  data!: ActivityNamesView;
}
