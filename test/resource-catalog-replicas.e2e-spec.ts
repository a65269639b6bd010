import { ApiClient, BrokerProcess, createPostgresDatabase, http, postgresServerUrl, testKey, writeConfigFile } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The protected-resource catalog across replicas: a resource changed through one broker
 * process is seen by another's token endpoint as soon as the write's `NOTIFY registry_changed`
 * arrives, well before the catalog's 5 s backstop.
 */
describe.runIf(postgresServerUrl())('resource catalog across broker processes on one PostgreSQL', () => {
  const replicas: BrokerProcess[] = [];
  const urls: Record<string, string>[] = [];

  beforeAll(async () => {
    const { file } = writeConfigFile({
      server: { enduser: { port: 0 }, admin: { port: 0 } },
      storage: { backend: 'postgres', postgres: { connection_url: await createPostgresDatabase() } },
      encryption: { keys: [{ id: 'kek-1', key: testKey() }], current_key_id: 'kek-1' },
      third_party_oauth2: { jwe_keys: [{ id: 'jwe-1', key: testKey() }] },
    });
    for (let i = 0; i < 2; i += 1) {
      const replica = new BrokerProcess('broker', ['--config', file]);
      replicas.push(replica);
      urls.push(await replica.listening(['enduser', 'admin']));
    }
  });

  afterAll(async () => {
    for (const replica of replicas) {
      replica.signal('SIGTERM');
      await replica.exited;
    }
  });

  it("gives replica B's token endpoint the scopes replica A's admin API gave the resource, within a second", async () => {
    const [a, b] = urls as [Record<string, string>, Record<string, string>];
    const admin = new ApiClient(a.admin as string);
    const uri = 'https://files-mcp.example.com/mcp';
    const read = { scope: 'files.read', description: 'Read your files' };
    const write = { scope: 'files.write', description: 'Change your files' };
    const created = await admin.post('/api/resources', { display_name: 'Files', resource_uri: uri, scopes: [read] });
    expect(created.status, created.text).toBe(201);
    const resource = created.json<{ id: string }>().id;
    const agent = (await admin.post('/api/agents', { display_name: 'A', allowed_scopes: ['files.read', 'files.write'] })).json<{ id: string }>().id;
    const secret = (await admin.post(`/api/agents/${agent}/client-credentials`, {})).json<{ client_secret: string }>().client_secret;

    const writeTokenOnB = async (): Promise<number> =>
      (
        await http(`${b.enduser as string}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'client_credentials', client_id: agent, client_secret: secret, scope: 'files.write', resource: uri }).toString(),
        })
      ).status;
    /** The status B answers once it settles, polled for at most a second (the backstop is 5 s). */
    const settlesTo = async (status: number): Promise<number> => {
      const deadline = Date.now() + 1_000;
      let seen = await writeTokenOnB();
      while (seen !== status && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        seen = await writeTokenOnB();
      }
      return seen;
    };

    // B reads the catalog: the resource does not offer files.write.
    expect(await settlesTo(400)).toBe(400);
    expect((await admin.put(`/api/resources/${resource}`, { display_name: 'Files', resource_uri: uri, scopes: [read, write] })).status).toBe(200);
    expect(await settlesTo(200)).toBe(200);
    expect((await admin.put(`/api/resources/${resource}`, { display_name: 'Files', resource_uri: uri, scopes: [read] })).status).toBe(200);
    expect(await settlesTo(400)).toBe(400);
  });
});
