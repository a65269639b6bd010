import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ServerKind } from '@broker/config';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, ValidationContext, type Document, type Operation } from 'openapi-backend';

/**
 * Every answer the tests receive from a broker server is checked against that server's
 * published OpenAPI document: the status is documented for the operation,
 * the content type is one the document lists, the body matches the schema. An
 * undocumented answer fails the test that caused it. The documents are the ones
 * `npm run build` writes to `openapi/` (`npm test` builds first).
 */

const DOCUMENTS: Readonly<Record<ServerKind, string>> = {
  enduser: 'openapi/user-api.json',
  admin: 'openapi/admin-api.json',
};

/**
 * Answers outside the API contract: the documents themselves, the rendered reference,
 * and CORS preflights (an HTTP mechanism answered before any operation).
 */
const OUTSIDE_CONTRACT = [/^\/openapi\.json$/, /^\/docs(\/.*)?$/];

/** The console's pages (docs/console.md) and its hashed assets, on each server (docs/admin-console.md). */
const CONSOLE: Readonly<Record<ServerKind, RegExp>> = {
  enduser: /^\/$|^\/(?:agents|connections|approvals|activity)(?:\/|$)|^\/authorization-requests\/|^\/assets\//,
  admin: /^\/$|^\/(?:agents|services|mcp-servers|permission-sets|activity|signing-keys)(?:\/|$)|^\/assets\//,
};

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

interface CheckedResponse {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly contentType: string | undefined;
  readonly text: string;
}

class ServerContract {
  private readonly envelopes = new Map<string, (body: unknown) => boolean>();

  private constructor(
    private readonly kind: ServerKind,
    private readonly api: OpenAPIBackend,
    private readonly document: Document,
  ) {}

  static async load(kind: ServerKind): Promise<ServerContract> {
    const document = JSON.parse(readFileSync(resolve(DOCUMENTS[kind]), 'utf8')) as Document;
    // The document's validity is Redocly's job (`npm run lint`); openapi-backend's own check knows only OpenAPI 3.0.
    const api = new OpenAPIBackend({
      definition: structuredClone(document),
      strict: false,
      quick: true,
      ajvOpts: { strict: false, allErrors: true },
      // `uri`, `uuid`, `date-time`, `email` and the other JSON Schema formats are checked, not ignored.
      customizeAjv: (ajv) => addFormats(ajv),
    });
    await api.init();
    return new ServerContract(kind, api, document);
  }

  check(response: CheckedResponse): void {
    const { pathname, searchParams } = new URL(response.url);
    const method = response.method.toUpperCase();
    if (method === 'OPTIONS' || OUTSIDE_CONTRACT.some((pattern) => pattern.test(pathname))) return;
    // The consoles' pages and assets are not API operations; a JSON answer there (404 when the
    // console is not served) is still checked as an envelope below.
    const json = response.contentType?.toLowerCase().startsWith('application/json') === true;
    if ((method === 'GET' || method === 'HEAD') && CONSOLE[this.kind].test(pathname) && !json) return;
    // A browser's unknown page: the console's own "page not found" (HTML, 404 kept), outside the API's paths.
    const html = response.contentType?.toLowerCase().startsWith('text/html') === true;
    if ((method === 'GET' || method === 'HEAD') && html && response.status === 404 && !pathname.startsWith('/api/'))
      return;
    const where = `${method} ${pathname} → ${response.status}`;
    const operation = this.api.router.matchOperation({
      method,
      path: pathname,
      query: Object.fromEntries(searchParams),
      headers: {},
    });
    if (operation === undefined) {
      // No operation: the framework's own answer (unknown route or method), still in an envelope.
      this.checkUnknownRoute(response, where, pathname);
      return;
    }
    covered.add(`${this.kind} ${operation.operationId}`);
    const documented = (operation.responses ?? {}) as Record<string, { content?: Record<string, unknown> }>;
    const declared =
      documented[String(response.status)] ?? documented[`${String(response.status)[0]}XX`] ?? documented.default;
    if (declared === undefined)
      throw new ContractViolation(
        `undocumented answer ${where} (${operation.operationId} documents ${Object.keys(documented).join(', ')}): ${response.text.slice(0, 300)}`,
      );
    const media = response.contentType?.split(';')[0]?.trim().toLowerCase();
    if (declared.content === undefined) {
      if (response.text.length > 0 && method !== 'HEAD')
        throw new ContractViolation(
          `${where} documents no body but answered ${media ?? 'untyped'}: ${response.text.slice(0, 300)}`,
        );
      return;
    }
    if (media === undefined || declared.content[media] === undefined)
      throw new ContractViolation(
        `${where} answered ${media ?? 'no content type'}, documented ${Object.keys(declared.content).join(', ')}`,
      );
    if (media !== 'application/json' || method === 'HEAD') return;
    this.checkBody(operation, response, where);
  }

  private checkBody(operation: Operation, response: CheckedResponse, where: string): void {
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      throw new ContractViolation(
        `${where} answered application/json that does not parse: ${response.text.slice(0, 300)}`,
      );
    }
    const result = this.api.validateResponse(body, operation, response.status);
    if (result.errors)
      throw new ContractViolation(
        `${where} does not match ${operation.operationId}'s schema: ${JSON.stringify(result.errors.slice(0, 5))}; body ${response.text.slice(0, 500)}`,
      );
  }

  private checkUnknownRoute(response: CheckedResponse, where: string, pathname: string): void {
    if (response.status < 400) {
      // The e2e tests' probe routes (test/support/probe.module.ts) exist only in tests: their successes are theirs.
      if (pathname.startsWith('/api/probe/')) return;
      throw new ContractViolation(`${where}: no documented operation answers this request`);
    }
    // Every error answer, even of a route no operation owns (unknown route, refused before routing), is an envelope.
    const envelope =
      pathname.startsWith('/oauth2/') || pathname.startsWith('/.well-known/') ? 'OAuthError' : 'ApiError';
    let validate = this.envelopes.get(envelope);
    if (validate === undefined) {
      validate = this.api.validator
        .getAjv(ValidationContext.Response)
        .compile({ $ref: `#/components/schemas/${envelope}`, components: this.document.components });
      this.envelopes.set(envelope, validate);
    }
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      throw new ContractViolation(`${where} is not a JSON envelope: ${response.text.slice(0, 300)}`);
    }
    if (!validate(body))
      throw new ContractViolation(`${where} is not the ${envelope} envelope: ${response.text.slice(0, 300)}`);
  }
}

/** `<server kind> <operationId>` of every operation an answer was checked against (this test process). */
const covered = new Set<string>();

const contracts = new Map<ServerKind, Promise<ServerContract>>();
const servers = new Map<string, ServerKind>();

function contract(kind: ServerKind): Promise<ServerContract> {
  let found = contracts.get(kind);
  if (found === undefined) {
    found = ServerContract.load(kind);
    contracts.set(kind, found);
  }
  return found;
}

/** Answers from `baseUrl` are from a broker server of this kind from now on (test brokers register their servers). */
export function registerContractServer(baseUrl: string, kind: ServerKind): void {
  servers.set(new URL(baseUrl).origin, kind);
}

/**
 * Forgets every registered broker origin: test files that share a worker would otherwise check a later file's
 * provider, on a port an earlier file's broker used, against a broker document.
 */
export function forgetContractServers(): void {
  servers.clear();
}

/**
 * Rejects with a `ContractViolation` when an answer of a registered broker server is
 * not the one its document describes; answers of other servers (test providers) pass.
 */
export async function checkContract(response: CheckedResponse): Promise<void> {
  const kind = servers.get(new URL(response.url).origin);
  if (kind !== undefined) (await contract(kind)).check(response);
}

/** The operations (`<server kind> <operationId>`) whose answers were checked so far in this test process. */
export function coveredOperations(): ReadonlySet<string> {
  return covered;
}
