import { randomUUID } from 'node:crypto';
import { LongPollHub } from '@broker/approvals';
import { Database } from '@broker/persistence';
import { ApiClient, http, type HttpResponse, type TestBroker, type TestJwtIssuer } from '@broker/testing';
import { TokenVault } from '@broker/vault';

/** The member a refused exchange adds (docs/authorization-requests.md). */
export interface AuthorizationRequestMember {
  id: string;
  url: string;
  expires_at: string;
  expires_in: number;
}

/** A refused exchange's body. */
export interface Refusal {
  error: string;
  error_description?: string;
  error_uri?: string;
  authorization_request?: AuthorizationRequestMember;
}

/** What the person API answers for a request. */
export interface RequestView {
  id: string;
  status: 'pending' | 'completed' | 'denied' | 'expired';
  step: 'consent' | 'connect' | 'done';
  agent: { id: string; display_name: string };
  service: { id: string; display_name: string };
  scopes: { scope: string; description: string }[];
  needs_grant: boolean;
  needs_connection: boolean;
  grant_exists: boolean;
  created_at: string;
  expires_at: string;
  expires_in: number;
  answered_at: string | null;
}

/** What the gateway's wait answers. */
export interface RequestState {
  id: string;
  status: 'pending' | 'completed' | 'denied' | 'expired';
  principal: string;
  agent_id: string;
  service_id: string;
  scopes: string[];
  created_at: string;
  expires_at: string;
  answered_at: string | null;
}

/** One registered service: its id and the resource a gateway names in the exchange. */
export interface TestService {
  readonly id: string;
  readonly resource: string;
  readonly permissionSet: string;
}

/** A third-party access token stored for a person's connection: a secret every test searches answers and logs for. */
export const THIRD_PARTY_TOKEN = 'third-party-access-token-ar-5e0c91d2b7';

/** A fresh person per test, so the per-person limits of one test never meet another's requests. */
export const person = (name: string): string => `${name}-${randomUUID().slice(0, 8)}@example.com`;

/**
 * The registry and calls the authorization-request tests share, against one broker's end-user
 * server (`base`, also its public URL) and admin server, whose gateway signs with `issuer`:
 * services each offered by one permission set, agents assigned those sets, the refused exchange,
 * the person API, the gateway's wait.
 */
export class AuthorizationRequestWorld {
  /** Every JWT and secret this world sent or stored: no answer, event or log line may carry one. */
  readonly secrets: string[] = [THIRD_PARTY_TOKEN];

  constructor(
    readonly broker: TestBroker,
    readonly base: string,
    readonly issuer: TestJwtIssuer,
    /** The broker's public URL (the audience of the gateway's JWTs and the links' origin); default `base`. */
    readonly publicUrl: string = base,
  ) {}

  get admin(): ApiClient {
    return new ApiClient(this.broker.url('admin'));
  }

  user(principal: string): ApiClient {
    return new ApiClient(this.base, principal);
  }

  /** The same registry, served by another broker on the same database (a replica). */
  on(broker: TestBroker, base: string): AuthorizationRequestWorld {
    const other = new AuthorizationRequestWorld(broker, base, this.issuer, this.publicUrl);
    other.secrets.push(...this.secrets);
    return other;
  }

  /** Registers `count` services (scopes `mail.read` and `mail.send`) and a permission set offering each. */
  async services(count: number): Promise<TestService[]> {
    const services: TestService[] = [];
    for (let i = 0; i < count; i += 1) {
      const tag = randomUUID().slice(0, 8);
      const resource = `https://mail-${tag}.example.com/api`;
      const id = await this.created('/api/services', {
        display_name: `Mail ${tag}`,
        client_id: `mail-${tag}`,
        issuer_uri: 'https://idp.example.com',
        authorization_endpoint: 'https://idp.example.com/authorize',
        token_endpoint: 'https://idp.example.com/token',
        scopes: [
          { scope: 'mail.read', description: 'Read your mail' },
          { scope: 'mail.send', description: 'Send mail as you' },
        ],
        protected_resources: [resource],
      });
      const permissionSet = await this.created('/api/permission-sets', {
        name: `Mail ${tag}`,
        description: 'Read your mail',
        service_scopes: [{ service_id: id, scopes: ['mail.read'] }],
      });
      services.push({ id, resource, permissionSet });
    }
    return services;
  }

  /** Registers an agent assigned the permission sets of `services` (nobody has allowed it yet). */
  async agent(services: readonly TestService[], displayName = 'Mail Agent'): Promise<string> {
    return this.created('/api/agents', {
      display_name: displayName,
      permission_sets: services.map((service) => ({
        permission_set_id: service.permissionSet,
        requirement_type: 'optional',
      })),
    });
  }

  /** Stores a usable connection (a third-party token) of `principal` to `service`. */
  async connect(principal: string, service: TestService): Promise<void> {
    await this.broker.broker
      .server('enduser')
      .app.get(TokenVault)
      .store(principal, service.id, {
        accessToken: THIRD_PARTY_TOKEN,
        tokenType: 'Bearer',
        refreshToken: undefined,
        expiresIn: 3600,
        refreshTokenExpiresIn: undefined,
        scopes: ['mail.read'],
      });
  }

  /** A client assertion of the gateway `sub` for the broker. */
  async assertion(sub = 'gateway-1'): Promise<string> {
    const jwt = await this.issuer.sign({ sub, jti: randomUUID() }, { audience: this.publicUrl, ttlSeconds: 3600 });
    this.secrets.push(jwt);
    return jwt;
  }

  /** A subject token of `principal` acting through `agent`. */
  async subjectToken(principal: string, agent: string): Promise<string> {
    const jwt = await this.issuer.sign({ sub: principal, azp: agent }, { audience: this.publicUrl, ttlSeconds: 3600 });
    this.secrets.push(jwt);
    return jwt;
  }

  /** The exchange's form fields for `principal` through `agent` to `service` (fresh JWTs, no jti: retries may resend them). */
  async exchangeFields(
    principal: string,
    agent: string,
    service: TestService,
    extra: Record<string, string> = {},
  ): Promise<Record<string, string>> {
    const assertion = await this.issuer.sign({ sub: 'gateway-1' }, { audience: this.publicUrl, ttlSeconds: 3600 });
    this.secrets.push(assertion);
    return {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
      subject_token: await this.subjectToken(principal, agent),
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: service.resource,
      ...extra,
    };
  }

  /** POSTs a token exchange with `fields`. */
  postExchange(fields: Record<string, string>): Promise<HttpResponse> {
    return http(`${this.base}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** A token exchange of `principal` through `agent` to `service`. */
  async exchange(
    principal: string,
    agent: string,
    service: TestService,
    extra: Record<string, string> = {},
  ): Promise<HttpResponse> {
    return this.postExchange(await this.exchangeFields(principal, agent, service, extra));
  }

  /** A refused exchange that must carry the member: returns it. */
  async requested(principal: string, agent: string, service: TestService): Promise<AuthorizationRequestMember> {
    const response = await this.exchange(principal, agent, service);
    const member = response.json<Refusal>().authorization_request;
    if (response.status === 200 || member === undefined)
      throw new Error(`expected a refusal with an authorization request: ${response.status} ${response.text}`);
    return member;
  }

  /** The person's active grants for `agent` (zero or one). */
  async grants(principal: string, agent: string): Promise<Record<string, unknown>[]> {
    const response = await this.user(principal).get(`/api/consent/agents/${agent}/grants`);
    if (response.status !== 200) throw new Error(`grants: ${response.status} ${response.text}`);
    return response.json<{ data: Record<string, unknown>[] }>().data;
  }

  /** The person API: `GET /api/authorization-requests/{id}` as `principal`. */
  view(principal: string, id: string): Promise<HttpResponse> {
    return this.user(principal).get(`/api/authorization-requests/${id}`);
  }

  /** The request as its owner sees it (200 or the test fails). */
  async viewed(principal: string, id: string): Promise<RequestView> {
    const response = await this.view(principal, id);
    if (response.status !== 200) throw new Error(`view ${id}: ${response.status} ${response.text}`);
    return response.json<{ data: RequestView }>().data;
  }

  allow(principal: string, id: string, body: Record<string, unknown> = {}): Promise<HttpResponse> {
    return this.user(principal).post(`/api/authorization-requests/${id}/allow`, body);
  }

  deny(principal: string, id: string): Promise<HttpResponse> {
    return this.user(principal).post(`/api/authorization-requests/${id}/deny`);
  }

  /** The gateway's wait (`GET …/state`) with a client assertion of `sub`, and `headers` over it. */
  async state(id: string, headers: Record<string, string> = {}, sub = 'gateway-1'): Promise<HttpResponse> {
    return http(`${this.base}/api/authorization-requests/${id}/state`, {
      headers: { 'x-client-assertion': await this.assertion(sub), ...headers },
    });
  }

  /** A wait held while the request is pending (`If-None-Match: "pending"`), for at most `seconds`. */
  held(id: string, seconds = 60): Promise<HttpResponse> {
    return this.state(id, { 'if-none-match': '"pending"', 'x-long-poll-timeout': String(seconds) });
  }

  /** Long-polls held by this broker right now. */
  get holding(): number {
    return this.broker.broker.server('enduser').app.get(LongPollHub).held;
  }

  /** The rows of the requests of `principal` in the database. */
  async rows(principal: string): Promise<number> {
    const result = await this.broker.broker
      .server('enduser')
      .app.get(Database)
      .dataSource.query<{ n: number }[]>('SELECT count(*)::int AS n FROM authorization_requests WHERE principal = $1', [
        principal,
      ]);
    return result[0]?.n ?? 0;
  }

  /** Every ledger event of `types` about `principal`, oldest first (the admins' `GET /api/events`). */
  async events(principal: string, types: readonly string[]): Promise<LedgerEvent[]> {
    const events: LedgerEvent[] = [];
    let cursor: string | null = null;
    do {
      const query = `principal=${encodeURIComponent(principal)}&type=${types.join(',')}&limit=100`;
      const response = await this.admin.get(
        `/api/events?${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      if (response.status !== 200) throw new Error(`events: ${response.status} ${response.text}`);
      const page = response.json<{ items: LedgerEvent[]; next_cursor: string | null }>();
      events.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor !== null);
    return events.reverse();
  }

  private async created(path: string, body: Record<string, unknown>): Promise<string> {
    const response = await this.admin.post(path, body);
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${response.text}`);
    return response.json<{ id: string }>().id;
  }
}

/** One event as the admins' ledger lists it. */
export interface LedgerEvent {
  id: string;
  type: string;
  occurred_at: string;
  principal: string | null;
  actor: { type: string; id: string | null };
  agent_id: string | null;
  service_id: string | null;
  outcome: string;
  details: Record<string, unknown>;
}

/** The authorization-request event kinds. */
export const REQUEST_EVENTS = [
  'authorization_request.created',
  'authorization_request.completed',
  'authorization_request.denied',
  'authorization_request.expired',
  'authorization_request.misdirected',
] as const;
