import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from './http-client';
import { ContractViolation, coveredOperations, registerContractServer } from './openapi-contract';

/** What the fake server answers next: status, content type and body. */
let next: { status: number; type?: string; body: string } = { status: 200, type: 'application/json', body: '[]' };

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

/**
 * The checker every e2e test's requests go through: a fake server registered
 * as the admin server answers what each case chooses, and the checker must refuse
 * every answer the admin document does not describe.
 */
describe('the OpenAPI response check of the test HTTP clients', () => {
  const fake = createServer((_request, response) => {
    response.writeHead(next.status, next.type === undefined ? {} : { 'content-type': next.type }).end(next.body);
  });
  const other = createServer((_request, response) =>
    response.writeHead(418, { 'content-type': 'text/plain' }).end('teapot'),
  );
  let url = '';
  let otherUrl = '';

  beforeAll(async () => {
    url = await listen(fake);
    otherUrl = await listen(other);
    registerContractServer(url, 'admin');
  });
  afterAll(() => {
    fake.close();
    other.close();
  });

  const answer = (status: number, body: unknown, type = 'application/json; charset=utf-8') => {
    next = { status, type, body: typeof body === 'string' ? body : JSON.stringify(body) };
  };

  it('passes a documented answer and records the operation as covered', async () => {
    answer(200, []);
    expect((await http(`${url}/api/agents`)).status).toBe(200);
    answer(401, { error: 'unauthorized', message: 'authentication required' });
    expect((await http(`${url}/api/agents`)).status).toBe(401);
    expect(coveredOperations().has('admin AgentsController_list')).toBe(true);
  });

  it('refuses a status the operation does not document', async () => {
    answer(418, { error: 'conflict', message: 'x' });
    await expect(http(`${url}/api/agents`)).rejects.toThrow(ContractViolation);
    await expect(http(`${url}/api/agents`)).rejects.toThrow(/undocumented answer GET \/api\/agents → 418/);
  });

  it('refuses a body that does not match the schema: a wrong type, a missing field, an undocumented field, a code outside the status', async () => {
    answer(200, [{ id: 1 }]);
    await expect(http(`${url}/api/agents`)).rejects.toThrow(/does not match AgentsController_list/);
    answer(401, { error: 'unauthorized' });
    await expect(http(`${url}/api/agents`)).rejects.toThrow(/does not match/);
    answer(401, { error: 'unauthorized', message: 'authentication required', stack: 'at x' });
    await expect(http(`${url}/api/agents`)).rejects.toThrow(/does not match/);
    answer(401, { error: 'conflict', message: 'x' });
    await expect(http(`${url}/api/agents`)).rejects.toThrow(/does not match/);
  });

  it('refuses an undocumented content type and JSON that does not parse', async () => {
    answer(200, '[]', 'text/plain');
    await expect(http(`${url}/api/agents`)).rejects.toThrow(/answered text\/plain/);
    answer(200, '[', 'application/json');
    await expect(http(`${url}/api/agents`)).rejects.toThrow(/does not parse/);
  });

  it('refuses a body where the document says there is none (a redirect of the end-user server)', async () => {
    const enduser = createServer((_request, response) =>
      response
        .writeHead(302, { location: 'https://client.example/cb', 'content-type': 'application/json' })
        .end('{"code":"x"}'),
    );
    const enduserUrl = await listen(enduser);
    registerContractServer(enduserUrl, 'enduser');
    try {
      await expect(http(`${enduserUrl}/oauth2/authorize?response_type=code`)).rejects.toThrow(/documents no body/);
    } finally {
      enduser.close();
    }
  });

  it('checks a route no operation owns for the envelope of an unknown route', async () => {
    answer(404, { error: 'not_found', message: 'no route' });
    expect((await http(`${url}/api/nothing-here`)).status).toBe(404);
    answer(404, { detail: 'not found' });
    await expect(http(`${url}/api/nothing-here`)).rejects.toThrow(/not the ApiError envelope/);
    answer(200, []);
    await expect(http(`${url}/api/nothing-here`)).rejects.toThrow(/no documented operation/);
  });

  it('checks answers received through the global fetch too', async () => {
    answer(418, { error: 'conflict', message: 'x' });
    await expect(fetch(`${url}/api/agents`)).rejects.toThrow(/undocumented answer/);
  });

  it('leaves answers of servers that are not brokers alone', async () => {
    expect((await http(`${otherUrl}/api/agents`)).status).toBe(418);
  });
});
