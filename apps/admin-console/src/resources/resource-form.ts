import type { components } from '../api/admin-api';
import { rowKey, type ScopeRow } from '../services/service-form';

export type Resource = components['schemas']['ResourceResponse'];
export type ResourceBody = components['schemas']['ResourceDto'];

/** What the MCP server form holds, as typed. */
export interface ResourceForm {
  readonly display_name: string;
  readonly description: string;
  readonly logo_url: string;
  readonly resource_uri: string;
  readonly scopes: readonly ScopeRow[];
}

export function emptyResourceForm(): ResourceForm {
  return { display_name: '', description: '', logo_url: '', resource_uri: '', scopes: [] };
}

export function resourceForm(resource: Resource): ResourceForm {
  return {
    display_name: resource.display_name,
    description: resource.description ?? '',
    logo_url: resource.logo_url ?? '',
    resource_uri: resource.resource_uri,
    scopes: resource.scopes.map((s) => ({ key: rowKey(), scope: s.scope, description: s.description })),
  };
}

const orNull = (value: string): string | null => (value.trim() === '' ? null : value.trim());

/** The body of POST or PUT. The URI is sent exactly as typed (only surrounding spaces dropped): it is compared as written. */
export function resourceBody(form: ResourceForm): ResourceBody {
  return {
    display_name: form.display_name.trim(),
    description: orNull(form.description),
    logo_url: orNull(form.logo_url),
    resource_uri: form.resource_uri.trim(),
    scopes: form.scopes.map((row) => ({ scope: row.scope.trim(), description: row.description.trim() })),
  };
}

export const RESOURCE_LABELS: Readonly<Record<string, string>> = {
  display_name: 'Name',
  description: 'Description',
  logo_url: 'Logo URL',
  resource_uri: 'Resource URI',
  scopes: 'Scopes',
};

export function resourceFieldLabel(field: string): string {
  if (/^scopes\.\d+\.scope$/.test(field)) return 'Scope';
  if (/^scopes\.\d+\.description$/.test(field)) return 'Description';
  return RESOURCE_LABELS[field] ?? field;
}

/** The rules the API states in its own words, said for the person at the field. */
export function resourceProblemWords(field: string, problem: string): string | undefined {
  if (field === 'resource_uri' && problem.startsWith('not within '))
    return `This URI is outside the MCP servers this broker may issue tokens for (the configuration's ${problem.slice('not within '.length)}): the authorization endpoint would refuse it.`;
  if (field === 'scopes' && problem === 'duplicate scope')
    return 'A scope is listed more than once: keep each scope once.';
  if (/^scopes\.\d+\.description$/.test(field) && /longer than or equal to 1 characters/.test(problem))
    return 'Say what this scope lets an agent do: people read it on the consent page.';
  return undefined;
}

/**
 * A 409 of a save in words: the URI is another MCP server's or a service's API, or the edit drops scopes that
 * permission sets still name (docs/admin-api.md "Protected resources (MCP servers)").
 */
export function explainResourceConflict(message: string, others: readonly Resource[], ownId?: string): string {
  const inUse = /^scopes: (.*) still named by the permission set\(s\) (.*): remove them there first$/.exec(message);
  if (inUse !== null) {
    const scopes = (inUse[1] as string).split(', ');
    const sets = (inUse[2] as string).split(', ').map((name) => `“${name.replace(/^"|"$/g, '')}”`);
    return `This change removes the scope${scopes.length === 1 ? '' : 's'} ${scopes.join(', ')}, which the permission set${sets.length === 1 ? '' : 's'} ${sets.join(', ')} still ${sets.length === 1 ? 'names' : 'name'}. Remove ${scopes.length === 1 ? 'it' : 'them'} from ${sets.length === 1 ? 'that set' : 'those sets'} first, or keep ${scopes.length === 1 ? 'the scope' : 'the scopes'} here.`;
  }
  const ofService = /is a protected resource of the service "(.*)":/.exec(message);
  if (ofService !== null)
    return `This URI is an API of the service “${ofService[1]}” (one of its protected resources). A URI is either a third-party service's API or an MCP server the broker issues tokens for, never both.`;
  if (message.startsWith('another protected resource already has resource_uri')) {
    const other = others.find((r) => r.id !== ownId && message.endsWith(` ${r.resource_uri}`));
    return other !== undefined
      ? `The MCP server “${other.display_name}” already has this resource URI: each MCP server has its own.`
      : 'Another MCP server already has this resource URI: each MCP server has its own.';
  }
  return message;
}
