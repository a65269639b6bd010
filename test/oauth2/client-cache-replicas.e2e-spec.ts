import {
  ApiClient,
  BrokerProcess,
  createPostgresDatabase,
  http,
  postgresServerUrl,
  testKey,
  writeConfigFile,
} from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The token endpoint's registry caches across replicas, as soon as a write's `NOTIFY
 * registry_changed` arrives, well before their 5 s backstop: the client cache (a credential
 * rotated or revoked on one broker process stops working on another) and the protected-resource
 * catalog (a resource changed through one process is seen by another's token endpoint).
 */
describe.runIf(postgresServerUrl())(
  'client cache and resource catalog across broker processes on one PostgreSQL',
  () => {
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

    it('stops an old secret on replica B within a second of its rotation and revocation on replica A', async () => {
      const [a, b] = urls as [Record<string, string>, Record<string, string>];
      const admin = new ApiClient(a.admin as string);
      const service = (
        await admin.post('/api/services', {
          display_name: 'S',
          client_id: 'c',
          issuer_uri: 'https://idp.example.com',
          authorization_endpoint: 'https://idp.example.com/a',
          token_endpoint: 'https://idp.example.com/t',
          protected_resources: ['https://api.example.com'],
        })
      ).json<{ id: string }>().id;
      const set = (
        await admin.post('/api/permission-sets', {
          name: 'P',
          service_scopes: [{ service_id: service, scopes: ['read'] }],
        })
      ).json<{ id: string }>().id;
      const agent = (
        await admin.post('/api/agents', { display_name: 'A', permission_sets: [{ permission_set_id: set }] })
      ).json<{ id: string }>().id;
      const issueOnB = async (secret: string) =>
        (
          await http(`${b.enduser as string}/oauth2/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              grant_type: 'client_credentials',
              client_id: agent,
              client_secret: secret,
            }).toString(),
          })
        ).status;
      /** The status B answers once it settles, polled for at most a second (the backstop is 5 s). */
      const settlesTo = async (secret: string, status: number): Promise<number> => {
        const deadline = Date.now() + 1_000;
        let seen = await issueOnB(secret);
        while (seen !== status && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 25));
          seen = await issueOnB(secret);
        }
        return seen;
      };

      const first = (await admin.post(`/api/agents/${agent}/client-credentials`, {})).json<{ client_secret: string }>()
        .client_secret;
      expect(await settlesTo(first, 200)).toBe(200);
      // B now serves the client from its cache; A rotates the secret.
      const second = (await admin.post(`/api/agents/${agent}/client-credentials`, {})).json<{ client_secret: string }>()
        .client_secret;
      expect(await settlesTo(first, 401)).toBe(401);
      expect(await issueOnB(second)).toBe(200);
      expect((await admin.delete(`/api/agents/${agent}/client-credentials`)).status).toBe(204);
      expect(await settlesTo(second, 401)).toBe(401);
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
      const agent = (
        await admin.post('/api/agents', { display_name: 'A', allowed_scopes: ['files.read', 'files.write'] })
      ).json<{ id: string }>().id;
      const secret = (await admin.post(`/api/agents/${agent}/client-credentials`, {})).json<{ client_secret: string }>()
        .client_secret;

      const writeTokenOnB = async (): Promise<number> =>
        (
          await http(`${b.enduser as string}/oauth2/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              grant_type: 'client_credentials',
              client_id: agent,
              client_secret: secret,
              scope: 'files.write',
              resource: uri,
            }).toString(),
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
      expect(
        (
          await admin.put(`/api/resources/${resource}`, {
            display_name: 'Files',
            resource_uri: uri,
            scopes: [read, write],
          })
        ).status,
      ).toBe(200);
      expect(await settlesTo(200)).toBe(200);
      expect(
        (await admin.put(`/api/resources/${resource}`, { display_name: 'Files', resource_uri: uri, scopes: [read] }))
          .status,
      ).toBe(200);
      expect(await settlesTo(400)).toBe(400);
    });
  },
);
