import { checkContract } from './openapi-contract';

/** Marks the checking `fetch`, so a worker that runs several files (no isolation) wraps it once. */
const CHECKING = Symbol.for('broker.contract-fetch');

/**
 * Wraps the global `fetch` (used by oauth4webapi and by tests directly) so its answers
 * from broker servers are checked against the OpenAPI documents like `http()`'s. A
 * violation rejects the call with the `ContractViolation`.
 */
export function installContractFetch(): void {
  if ((globalThis.fetch as typeof fetch & { [CHECKING]?: true })[CHECKING]) return;
  const original = globalThis.fetch;
  const checking = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    const response = await original(input, init);
    const request = input instanceof Request ? input : undefined;
    const method = init?.method ?? request?.method ?? 'GET';
    const url = request?.url ?? (input instanceof URL ? input.href : (input as string));
    await checkContract({
      method,
      url,
      status: response.status,
      contentType: response.headers.get('content-type') ?? undefined,
      text: await response.clone().text(),
    });
    return response;
  };
  globalThis.fetch = Object.assign(checking, { [CHECKING]: true as const });
}
