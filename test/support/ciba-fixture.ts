import {
  ApiClient,
  http,
  startGatewayFixture,
  type FrozenClock,
  type GatewayFixture,
  type HttpResponse,
  type TestBackend,
} from '@broker/testing';
import { BOTH_SERVERS } from './servers';

export const CIBA_GRANT = 'urn:openid:params:grant-type:ciba';
export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
export const TOOL_CALL = 'urn:agent-identity-broker:tool-call';
/** A gateway `sub` the fixture's authorization expression refuses. */
export const UNTRUSTED_GATEWAY = 'untrusted-gateway';
/** The registered MCP server the tool calls are for. */
export const PAY_MCP = 'https://pay-mcp.example.com/mcp';

/** One tool call of `authorization_details` (RFC 9396 §2), `overrides` merged over it. */
export function toolCall(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: TOOL_CALL,
    locations: [PAY_MCP],
    tool: 'send_payment',
    title: 'Send a payment',
    arguments: { to: 'acme@example.com', amount_eur: 120 },
    risk: 'critical',
    ...overrides,
  };
}

/** A confidential agent (broker-issued secret) allowed by `ALICE` for the payments MCP server. */
export interface CibaAgent {
  readonly id: string;
  readonly secret: string;
  /** `Authorization: Basic` of the agent's id and secret. */
  readonly basic: string;
}

/** A broker with CIBA enabled (local mode), a gateway trusted, a registered MCP server and its permission set. */
export interface CibaFixture {
  readonly gateway: GatewayFixture;
  readonly base: string;
  readonly admin: ApiClient;
  readonly permissionSet: string;
  readonly resource: string;
  /** Registers an agent with the payments permission set (and a secret unless `public`), allowed by `principals`. */
  agent(principals: readonly string[], options?: { public?: boolean; dpop?: boolean }): Promise<CibaAgent>;
  /** The person allows the agent the payments MCP server with `scopes`. */
  allow(principal: string, agentId: string): Promise<void>;
  /** POSTs the form to `/oauth2/bc-authorize` (or `path`). */
  bcAuthorize(fields: Record<string, string>, headers?: Record<string, string>, path?: string): Promise<HttpResponse>;
  /** POSTs the form to `/oauth2/token`. */
  token(fields: Record<string, string>, headers?: Record<string, string>): Promise<HttpResponse>;
  stop(): Promise<void>;
}

export async function startCibaFixture(options: {
  backend?: TestBackend;
  clock?: FrozenClock;
  /** Merged over `oauth2_authorization_server.ciba` (`enabled: true`). */
  ciba?: Record<string, unknown>;
  /** More of `oauth2_authorization_server` (the mode). */
  server?: Record<string, unknown>;
}): Promise<CibaFixture> {
  const gateway = await startGatewayFixture({
    servers: BOTH_SERVERS,
    backend: options.backend,
    clock: options.clock,
    gatewaySub: 'gateway-1',
    subjectAudience: 'gateway',
    ttlSeconds: 3600,
    config: {
      oauth2_authorization_server: { ...(options.server ?? {}), ciba: { enabled: true, ...(options.ciba ?? {}) } },
      // The exchange's authorization expression, which CIBA applies to the gateway too.
      token_exchange: { authorization: { cel: { expression: `client_assertion.sub != "${UNTRUSTED_GATEWAY}"` } } },
    },
  });
  const base = gateway.base;
  const admin = new ApiClient(gateway.broker.url('admin'));
  const created = async (path: string, body: Record<string, unknown>): Promise<string> => {
    const response = await admin.post(path, body);
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${response.text}`);
    return response.json<{ id: string }>().id;
  };
  const resource = await created('/api/resources', {
    display_name: 'Payments MCP',
    resource_uri: PAY_MCP,
    scopes: [
      { scope: 'payments.send', description: 'Send payments' },
      { scope: 'payments.admin', description: 'Administer payments' },
    ],
  });
  const permissionSet = await created('/api/permission-sets', {
    name: 'Payments',
    resource_scopes: [{ resource_id: resource, scopes: ['payments.send'] }],
  });
  const form =
    (path: string) =>
    (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      http(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
      });
  const allow = async (principal: string, agentId: string): Promise<void> => {
    const response = await new ApiClient(base, principal).post(`/api/consent/agents/${agentId}/grants`, {
      granted_permission_sets: { [permissionSet]: [resource] },
    });
    if (response.status !== 201) throw new Error(`grant: ${response.status} ${response.text}`);
  };
  return {
    gateway,
    base,
    admin,
    permissionSet,
    resource,
    allow,
    agent: async (principals, agentOptions = {}) => {
      const id = await created('/api/agents', {
        display_name: 'Payments Agent',
        permission_sets: [{ permission_set_id: permissionSet, requirement_type: 'mandatory' }],
        ...(agentOptions.dpop === true ? { dpop_bound_access_tokens: true } : {}),
      });
      let secret = '';
      if (agentOptions.public !== true) {
        const issued = await admin.post(`/api/agents/${id}/client-credentials`);
        if (issued.status !== 201) throw new Error(`credentials: ${issued.status} ${issued.text}`);
        secret = issued.json<{ client_secret: string }>().client_secret;
      }
      for (const principal of principals) await allow(principal, id);
      return { id, secret, basic: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` };
    },
    bcAuthorize: (fields, headers = {}, path = '/oauth2/bc-authorize') => form(path)(fields, headers),
    token: (fields, headers = {}) => form('/oauth2/token')(fields, headers),
    stop: () => gateway.stop(),
  };
}
