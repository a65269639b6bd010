import { BROKER_CONFIG, type BrokerConfig } from '@broker/config';
import { hasDotSegment, isHttpsOrLoopbackUrl, OAuthError, parseAbsoluteUrl, type Agent } from '@broker/domain';
import { Inject, Injectable, Logger } from '@nestjs/common';

/** At most this many `resource` values in one authorization request (each becomes an `aud` entry). */
export const MAX_RESOURCES = 10;
/** Longest accepted resource URI. */
const MAX_RESOURCE_LENGTH = 2048;

/** The configurations whose policy was logged already. */
const ANNOUNCED = new WeakSet<BrokerConfig>();

function invalidTarget(description: string): OAuthError {
  return new OAuthError('invalid_target', description);
}

/** A list of exact resource URIs and prefixes ending in `/`, compiled for matching. */
class ResourceList {
  private readonly exact: ReadonlySet<string>;
  private readonly prefixes: readonly string[];

  constructor(entries: readonly string[]) {
    this.exact = new Set(entries.filter((entry) => !entry.endsWith('/')));
    this.prefixes = entries.filter((entry) => entry.endsWith('/'));
  }

  get exactCount(): number {
    return this.exact.size;
  }

  get prefixCount(): number {
    return this.prefixes.length;
  }

  /** Exactly one of the URIs, or under one of the prefixes without a dot segment that could leave it. */
  matches(resource: string): boolean {
    if (this.exact.has(resource)) return true;
    return !hasDotSegment(resource) && this.prefixes.some((prefix) => resource.startsWith(prefix));
  }
}

/**
 * Agents' `allowed_resources`, compiled once per loaded list: the token endpoint's agents come
 * from the client cache, so the same array (and its compiled form) serves every request until
 * the agent is written or the cache entry expires; the entry goes with the array.
 */
const AGENT_LISTS = new WeakMap<readonly string[], ResourceList>();

/** The agent's own restriction, or undefined when it has none (an empty list). */
function agentList(agent: Pick<Agent, 'allowedResources'>): ResourceList | undefined {
  const entries = agent.allowedResources;
  if (entries.length === 0) return undefined;
  let list = AGENT_LISTS.get(entries);
  if (list === undefined) {
    list = new ResourceList(entries);
    AGENT_LISTS.set(entries, list);
  }
  return list;
}

/** The agent's `allowed_resources` does not name this resource. */
const NOT_FOR_AGENT = 'the resource is not one this client may ask tokens for';

/** `resource_indicators.required` and the request names no resource. */
const MISSING = 'a resource is required: name the resource the token is for (RFC 8707)';

/**
 * RFC 8707 resource indicators of the local authorization server. A `resource` is an absolute
 * URI without fragment (§2), compared and bound as sent (no normalisation: the resource server
 * compares `aud` with its own URL). Which ones may be asked for is
 * `oauth2_authorization_server.local.resource_indicators.allowed_resources`: exact URIs, or
 * prefixes ending in `/`; an empty list accepts any `https:` URI or `http:` on a loopback
 * host. An agent with a non-empty `allowed_resources` (same syntax) is further restricted to
 * those. With `resource_indicators.required`, an authorization request or a local token request
 * (`authorization_code`, `client_credentials`) that names no resource is `invalid_target`
 * (RFC 8707 §2: "missing"), so no token leaves without an audience. The policy is compiled once
 * at boot, an agent's list once per loaded agent; a check is a set lookup and a few prefix tests.
 */
@Injectable()
export class ResourceIndicators {
  private readonly configured: ResourceList;
  private readonly open: boolean;
  private readonly required: boolean;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig) {
    const { allowed_resources: allowed, required } = config.oauth2_authorization_server.local.resource_indicators;
    this.configured = new ResourceList(allowed);
    this.open = allowed.length === 0;
    this.required = required;
    // Both servers of a process build this module: the policy is announced once per configuration.
    if (ANNOUNCED.has(config)) return;
    ANNOUNCED.add(config);
    const logger = new Logger(ResourceIndicators.name);
    if (config.oauth2_authorization_server.mode === 'proxy')
      logger.log('resource indicators: forwarded to the upstream authorization server (proxy mode)');
    else if (this.open)
      logger.log(
        'resource indicators: any https URI or loopback http URI is accepted (resource_indicators.allowed_resources is empty; set it in production)',
      );
    else
      logger.log(
        `resource indicators: only the ${allowed.length} configured resource_indicators.allowed_resources entries (${this.configured.exactCount} exact, ${this.configured.prefixCount} prefixes)`,
      );
    if (config.oauth2_authorization_server.mode !== 'proxy')
      logger.log(
        required
          ? 'resource indicators: required on authorization and token requests (resource_indicators.required)'
          : 'resource indicators: optional; a token requested without resource has no audience of ours (set resource_indicators.required in production)',
      );
  }

  /**
   * The `resource` parameters of an authorization request (a repeated query parameter arrives
   * as an array), de-duplicated in their order; [] when there are none and none is required.
   * Throws `invalid_target` for a missing one when required, a malformed value, or one the
   * policy or the agent's `allowed_resources` refuses.
   */
  fromQuery(value: unknown, agent: Pick<Agent, 'allowedResources'>): string[] {
    if (value === undefined) {
      this.assertNamed([]);
      return [];
    }
    const values = Array.isArray(value) ? value : [value];
    if (!values.every((item): item is string => typeof item === 'string'))
      throw invalidTarget('resource must be an absolute URI');
    const resources = [...new Set(values)];
    if (resources.length > MAX_RESOURCES) throw invalidTarget(`at most ${MAX_RESOURCES} resources may be requested`);
    for (const resource of resources) this.assertAllowed(resource, agent);
    return resources;
  }

  /**
   * One resource: well formed (absolute, no fragment), within the policy and within the agent's
   * `allowed_resources` when it has any, else `invalid_target`.
   */
  assertAllowed(resource: string, agent: Pick<Agent, 'allowedResources'>): void {
    if (resource.length > MAX_RESOURCE_LENGTH || /[\s#]/.test(resource))
      throw invalidTarget('resource must be an absolute URI without a fragment');
    const url = parseAbsoluteUrl(resource);
    if (url === undefined || url.username !== '' || url.password !== '')
      throw invalidTarget('resource must be an absolute URI without a fragment');
    if (!this.allows(resource))
      throw invalidTarget('the resource is not one this authorization server issues tokens for');
    this.assertAgentAllows([resource], agent);
  }

  /**
   * Resources checked already (an authorization code's): still within the agent's
   * `allowed_resources`, which the admin may have narrowed since, else `invalid_target`.
   */
  assertAgentAllows(resources: readonly string[], agent: Pick<Agent, 'allowedResources'>): void {
    const list = agentList(agent);
    if (list !== undefined && !resources.every((resource) => list.matches(resource)))
      throw invalidTarget(NOT_FOR_AGENT);
  }

  /**
   * The resources a token is about to be bound to: with `resource_indicators.required`, at least
   * one (RFC 8707 §2: a missing resource is `invalid_target`), else `invalid_target`.
   */
  assertNamed(resources: readonly string[]): void {
    if (this.required && resources.length === 0) throw invalidTarget(MISSING);
  }

  /**
   * Whether `local.resource_indicators.allowed_resources` admits the resource (exactly, or
   * under a prefix ending in `/`); true when the list is empty. The admin API registers only
   * protected resources the authorization endpoint would take as a `resource`.
   */
  configuredAllows(resource: string): boolean {
    return this.open || this.configured.matches(resource);
  }

  private allows(resource: string): boolean {
    return this.open ? isHttpsOrLoopbackUrl(resource) : this.configured.matches(resource);
  }
}

/**
 * The resources a token request binds: the one it names, which must be among `authorized`
 * (RFC 8707 §2.2), else all of `authorized`.
 */
export function narrowResources(authorized: readonly string[], requested: string | undefined): readonly string[] {
  if (requested === undefined) return authorized;
  if (!authorized.includes(requested)) throw invalidTarget('the resource was not part of the authorization');
  return [requested];
}
