import { describe, expect, it } from 'vitest';
import { explainResourceConflict, resourceProblemWords, type Resource } from './resource-form';

const FILES: Resource = {
  id: 'a1b2c3d4-0000-4000-8000-000000000001',
  display_name: 'Files',
  description: null,
  logo_url: null,
  resource_uri: 'https://files.example.com/mcp',
  scopes: [],
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
};

describe("an MCP server's conflicts in words", () => {
  it('names the permission sets that still name the scopes an edit drops', () => {
    expect(
      explainResourceConflict(
        'scopes: files.write still named by the permission set(s) "Write files": remove them there first',
        [],
      ),
    ).toBe(
      'This change removes the scope files.write, which the permission set “Write files” still names. Remove it from that set first, or keep the scope here.',
    );
  });

  it('names the MCP server that already has the URI', () => {
    expect(
      explainResourceConflict('another protected resource already has resource_uri https://files.example.com/mcp', [
        FILES,
      ]),
    ).toBe('The MCP server “Files” already has this resource URI: each MCP server has its own.');
  });

  it('names the service whose API the URI is', () => {
    expect(
      explainResourceConflict(
        'resource_uri https://mail.example.com is a protected resource of the service "Mail": a URI is either …',
        [],
      ),
    ).toMatch(/^This URI is an API of the service “Mail”/);
  });

  it('explains a URI outside the allowed resources, naming the configuration key', () => {
    expect(
      resourceProblemWords(
        'resource_uri',
        'not within oauth2_authorization_server.local.resource_indicators.allowed_resources',
      ),
    ).toContain('oauth2_authorization_server.local.resource_indicators.allowed_resources');
  });
});
