import { ApiClient } from '@broker/testing';
import * as oauth from 'oauth4webapi';

/** The `authorization_details` type of a tool call (docs/ciba.md "The authorization_details type"). */
export const TOOL_CALL = 'urn:agent-identity-broker:tool-call';
export const CIBA_GRANT = 'urn:openid:params:grant-type:ciba';
/** The scope the example MCP server asks of every token (examples/mcp/server.mjs). */
export const MCP_SCOPE = 'mcp:tools';
export const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** The client assertion type of RFC 7523 §2.2, as the gateway authenticates. */
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** Client authentication by the gateway: a fresh assertion from `sign`, and `client_id` the agent it asks for. */
export function gatewayAuth(sign: () => Promise<string>): oauth.ClientAuth {
  return async (_as, client, body) => {
    body.set('client_id', client.client_id);
    body.set('client_assertion_type', JWT_BEARER);
    body.set('client_assertion', await sign());
  };
}

/** One tool call as an entry of our type: a payment on `location` (the MCP server's resource URI). */
export function paymentDetail(
  location: string,
  args: Record<string, unknown> = { to: 'acme@example.com', amount_eur: 120 },
): Record<string, unknown> {
  return {
    type: TOOL_CALL,
    locations: [location],
    actions: ['call'],
    tool: 'send_payment',
    title: 'Send a payment',
    description: 'Pays an invoice from the company account',
    arguments: args,
    risk: 'critical',
  };
}

/** oauth4webapi's request options here: loopback HTTP, and the origin dialled when it is not the issuer's. */
interface RequestOptions {
  readonly [oauth.allowInsecureRequests]: true;
  readonly [oauth.customFetch]?: (url: string, init: oauth.CustomFetchOptions<string, unknown>) => Promise<Response>;
}

function dialling(issuer: string, via: string | undefined): RequestOptions {
  if (via === undefined) return insecure;
  const from = new URL(issuer).origin;
  const to = new URL(via).origin;
  return {
    ...insecure,
    [oauth.customFetch]: (url, init) =>
      fetch(url.startsWith(from) ? `${to}${url.slice(from.length)}` : url, init as RequestInit),
  };
}

/** A poll's answer: the token response, or the error code and status of CIBA §11. */
export type PollAnswer =
  | { readonly kind: 'token'; readonly token: oauth.TokenEndpointResponse }
  | { readonly kind: 'error'; readonly error: string; readonly status: number; readonly description: unknown };

/**
 * A CIBA client built on oauth4webapi only (as an agent would be): the backchannel
 * authentication request (CIBA §7.1) and the token request with the auth_req_id (§10.1).
 */
export class CibaClient {
  private constructor(
    readonly as: oauth.AuthorizationServer,
    readonly client: oauth.Client,
    private readonly auth: oauth.ClientAuth,
    private readonly options: RequestOptions,
  ) {}

  /**
   * Discovers the broker's RFC 8414 metadata at `issuer`; the agent authenticates with `auth`.
   * `via`: the origin actually dialled for every URL of `issuer` (one replica of several
   * sharing a public URL); default the issuer itself.
   */
  static async discover(issuer: string, clientId: string, auth: oauth.ClientAuth, via?: string): Promise<CibaClient> {
    const options = dialling(issuer, via);
    const url = new URL(issuer);
    const as = await oauth.processDiscoveryResponse(
      url,
      await oauth.discoveryRequest(url, { algorithm: 'oauth2', ...options }),
    );
    return new CibaClient(as, { client_id: clientId }, auth, options);
  }

  /** The same agent, another way of authenticating, or another replica (`via`). */
  with(auth: oauth.ClientAuth, via?: string): CibaClient {
    return new CibaClient(this.as, this.client, auth, via === undefined ? this.options : dialling(this.as.issuer, via));
  }

  /** The raw answer of the backchannel authentication endpoint to `parameters`. */
  send(parameters: Record<string, string>): Promise<Response> {
    return oauth.backchannelAuthenticationRequest(this.as, this.client, this.auth, parameters, this.options);
  }

  /** Asks `principal` about `detail`; the parsed 200 answer (fails on an error answer). */
  async ask(
    principal: string,
    detail: Record<string, unknown>,
    extra: Record<string, string> = {},
  ): Promise<oauth.BackchannelAuthenticationResponse> {
    return oauth.processBackchannelAuthenticationResponse(
      this.as,
      this.client,
      await this.send({
        login_hint: principal,
        scope: MCP_SCOPE,
        authorization_details: JSON.stringify([detail]),
        ...extra,
      }),
    );
  }

  /** Polls the token endpoint once for `authReqId` (with a DPoP proof when `DPoP` is given). */
  async poll(authReqId: string, DPoP?: oauth.DPoPHandle): Promise<PollAnswer> {
    const response = await oauth.backchannelAuthenticationGrantRequest(this.as, this.client, this.auth, authReqId, {
      ...this.options,
      ...(DPoP === undefined ? {} : { DPoP }),
    });
    try {
      return {
        kind: 'token',
        token: await oauth.processBackchannelAuthenticationGrantResponse(this.as, this.client, response),
      };
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError)
        return { kind: 'error', error: error.error, status: error.status, description: error.error_description };
      throw error;
    }
  }
}

/** The error code of a poll's answer (`token` when it was a token). */
export const outcome = (answer: PollAnswer): string => (answer.kind === 'token' ? 'token' : answer.error);

/**
 * The registry one CIBA test needs: the MCP server at `resourceUri` registered as a protected
 * resource offering `mcp:tools`, a permission set of it, and a confidential agent (client
 * secret) assigned that set, which each of `principals` allows (an active grant: without one
 * the broker answers unknown_user_id).
 */
export async function cibaAgent(
  urls: { readonly admin: string; readonly enduser: string },
  options: { resourceUri: string; displayName: string; resourceName?: string; principals: readonly string[] },
): Promise<{ id: string; secret: string; resourceId: string; setId: string; allow(principal: string): Promise<void> }> {
  const admin = new ApiClient(urls.admin);
  const created = async (path: string, body: Record<string, unknown>): Promise<string> => {
    const response = await admin.post(path, body);
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${response.text}`);
    return response.json<{ id: string }>().id;
  };
  const resourceId = await created('/api/resources', {
    display_name: options.resourceName ?? 'Payments MCP',
    resource_uri: options.resourceUri,
    scopes: [{ scope: MCP_SCOPE, description: 'Use the payment tools' }],
  });
  const setId = await created('/api/permission-sets', {
    name: `${options.displayName} tools`,
    resource_scopes: [{ resource_id: resourceId, scopes: [MCP_SCOPE] }],
  });
  const id = await created('/api/agents', {
    display_name: options.displayName,
    allowed_scopes: [MCP_SCOPE],
    permission_sets: [{ permission_set_id: setId }],
  });
  const credentials = await admin.post(`/api/agents/${id}/client-credentials`, {});
  if (credentials.status !== 201) throw new Error(`client-credentials: ${credentials.status} ${credentials.text}`);
  const secret = credentials.json<{ client_secret: string }>().client_secret;
  const allow = async (principal: string): Promise<void> => {
    const response = await new ApiClient(urls.enduser, principal).post(`/api/consent/agents/${id}/grants`, {
      granted_permission_sets: { [setId]: [resourceId] },
    });
    if (response.status !== 201) throw new Error(`grant: ${response.status} ${response.text}`);
  };
  for (const principal of options.principals) await allow(principal);
  return { id, secret, resourceId, setId, allow };
}

/** The person's pending approval that a CIBA request created, found by its binding message. */
export async function pendingApprovalId(enduser: string, principal: string, bindingMessage: string): Promise<string> {
  const response = await new ApiClient(enduser, principal).get('/api/approvals/pending');
  if (response.status !== 200) throw new Error(`pending: ${response.status} ${response.text}`);
  const found = response
    .json<{ data: { id: string; binding_message?: string | null }[] }>()
    .data.find((approval) => approval.binding_message === bindingMessage);
  if (found === undefined) throw new Error(`no pending approval with the binding message "${bindingMessage}"`);
  return found.id;
}
