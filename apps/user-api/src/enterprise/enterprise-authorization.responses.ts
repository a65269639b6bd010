import { EnterpriseAuthorizationFields, toEnterpriseAuthorizationFields } from '@broker/api-shapes';
import type { EnterpriseAuthorizationView } from '@broker/persistence';
import { ApiProperty } from '@nestjs/swagger';

/** One scope of an enterprise authorization, in words when the registry has them. */
export class EnterpriseScopeResponse {
  scope!: string;
  @ApiProperty({ type: String, nullable: true })
  description!: string | null;
}

/** One of the person's enterprise authorizations: the shared fields and its scopes in words. */
export class EnterpriseAuthorizationResponse extends EnterpriseAuthorizationFields {
  /**
   * The same scopes, each with what it lets the agent do as the MCP server's registry entry describes it
   * (null when the entry does not describe it, or no MCP server is registered at `resource_uri` any more).
   */
  @ApiProperty({ type: () => [EnterpriseScopeResponse] })
  permissions!: EnterpriseScopeResponse[];
}

export class EnterpriseAuthorizationListResponse {
  data!: EnterpriseAuthorizationResponse[];
}

export function toEnterpriseAuthorizationResponse(view: EnterpriseAuthorizationView): EnterpriseAuthorizationResponse {
  return {
    ...toEnterpriseAuthorizationFields(view),
    permissions: view.scopes.map((scope) => {
      const description = view.resourceScopes.find((offered) => offered.scope === scope)?.description;
      return { scope, description: description === undefined || description === '' ? null : description };
    }),
  };
}
