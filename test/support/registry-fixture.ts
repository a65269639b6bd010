import { randomUUID } from 'node:crypto';
import type { ApiClient } from '@broker/testing';
import { expect } from 'vitest';

export interface RegistryFixture {
  mail: string;
  files: string;
  calendar: string;
  readMail: string;
  allFiles: string;
  calendarSet: string;
  agent: string;
}

/** POSTs `body` to the admin server's `path`, which must answer 201: the new entry's id. */
export async function adminCreated(admin: ApiClient, path: string, body: Record<string, unknown>): Promise<string> {
  const response = await admin.post(path, body);
  expect(response.status, `${path}: ${response.text}`).toBe(201);
  return response.json<{ id: string }>().id;
}

/** Services, permission sets and one agent, registered through the admin API. */
export async function createRegistry(admin: ApiClient, agentName = 'Mail Agent'): Promise<RegistryFixture> {
  const tag = randomUUID().slice(0, 8);
  const service = (name: string, scopes: [string, string][]): Promise<string> =>
    adminCreated(admin, '/api/services', {
      display_name: name,
      client_id: `${name}-${tag}`,
      issuer_uri: 'https://idp.example.com',
      authorization_endpoint: 'https://idp.example.com/authorize',
      token_endpoint: 'https://idp.example.com/token',
      logo_url: `https://cdn.example.com/${name}.png`,
      scopes: scopes.map(([scope, description]) => ({ scope, description })),
      protected_resources: [`https://${name}-${tag}.example.com/api`],
    });
  const mail = await service('mail', [
    ['mail.read', 'Read your mail'],
    ['mail.send', 'Send mail as you'],
  ]);
  const files = await service('files', [['files.read', 'Read your files']]);
  const calendar = await service('calendar', []);
  const readMail = await adminCreated(admin, '/api/permission-sets', {
    name: `Read mail ${tag}`,
    description: 'Mail access',
    service_scopes: [
      { service_id: mail, scopes: ['mail.read'], requirement_type: 'require_all_scopes' },
      { service_id: files, scopes: ['files.read'] },
    ],
  });
  const allFiles = await adminCreated(admin, '/api/permission-sets', {
    name: `Files ${tag}`,
    service_scopes: [
      { service_id: files, scopes: ['files.write', 'files.read'], requirement_type: 'optional' },
      { service_id: mail, scopes: ['mail.send', 'mail.read'], requirement_type: 'require_all_scopes' },
    ],
  });
  const calendarSet = await adminCreated(admin, '/api/permission-sets', {
    name: `Calendar ${tag}`,
    service_scopes: [{ service_id: calendar, scopes: [] }],
  });
  const agent = await adminCreated(admin, '/api/agents', {
    display_name: agentName,
    description: 'Reads mail',
    redirect_uris: ['https://agent.example.com/cb'],
    permission_sets: [
      { permission_set_id: readMail, requirement_type: 'mandatory' },
      { permission_set_id: allFiles, requirement_type: 'optional' },
      { permission_set_id: calendarSet },
    ],
  });
  return { mail, files, calendar, readMail, allFiles, calendarSet, agent };
}
