import { EnterpriseAuthorizationFields, toEnterpriseAuthorizationFields } from '@broker/api-shapes';
import type { EnterpriseAuthorizationView } from '@broker/persistence';

/** An agent's enterprise authorization as administrators read it: the shared fields and whose it is. */
export class AgentEnterpriseAuthorizationResponse extends EnterpriseAuthorizationFields {
  /** The person (the principal the identity provider's assertion was mapped to). */
  principal!: string;
}

export class AgentEnterpriseAuthorizationListResponse {
  items!: AgentEnterpriseAuthorizationResponse[];
}

export function toAgentEnterpriseAuthorizationResponse(
  view: EnterpriseAuthorizationView,
): AgentEnterpriseAuthorizationResponse {
  return { ...toEnterpriseAuthorizationFields(view), principal: view.principal };
}
