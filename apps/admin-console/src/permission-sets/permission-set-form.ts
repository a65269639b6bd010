import type { components } from '../api/admin-api';
import { rowKey } from '../services/service-form';

export type PermissionSet = components['schemas']['PermissionSetResponse'];
export type PermissionSetBody = components['schemas']['PermissionSetDto'];
export type RequirementType = PermissionSet['service_scopes'][number]['requirement_type'];

/** How strongly the agent needs a service or MCP server of the set, in words (the consent page's rule). */
export const REQUIREMENTS: readonly { value: RequirementType; label: string; meaning: string }[] = [
  { value: 'mandatory', label: 'Required', meaning: 'the person must allow it to allow the set' },
  { value: 'optional', label: 'Optional', meaning: 'the person may leave it out' },
  {
    value: 'require_all_scopes',
    label: 'Required, every scope',
    meaning: 'the person must allow it with every scope listed, none left out',
  },
];

/** "Optional (the person may leave it out)". */
export function requirementWords(value: RequirementType): string {
  const requirement = REQUIREMENTS.find((r) => r.value === value);
  return requirement === undefined ? value : `${requirement.label} (${requirement.meaning})`;
}

/** One service (or MCP server) of the set: which one, its scopes chosen, how strongly it is required. */
export interface EntryRow {
  readonly key: number;
  /** The service's or MCP server's id; empty: none chosen yet. */
  readonly id: string;
  readonly scopes: readonly string[];
  /** Services only: scopes the service does not list, space-separated. */
  readonly other: string;
  readonly requirement_type: RequirementType;
}

export interface PermissionSetForm {
  readonly name: string;
  readonly description: string;
  readonly services: readonly EntryRow[];
  readonly resources: readonly EntryRow[];
}

export function emptyEntry(): EntryRow {
  return { key: rowKey(), id: '', scopes: [], other: '', requirement_type: 'mandatory' };
}

export function emptyPermissionSetForm(): PermissionSetForm {
  return { name: '', description: '', services: [], resources: [] };
}

/**
 * The form of a stored set. A service's scopes it does not list (any more) stay in "other scopes", so saving
 * the form unchanged sends the set back as it was.
 */
export function permissionSetForm(
  set: PermissionSet,
  offered: (serviceId: string) => readonly string[],
): PermissionSetForm {
  return {
    name: set.name,
    description: set.description,
    services: set.service_scopes.map((entry) => {
      const listed = new Set(offered(entry.service_id));
      return {
        key: rowKey(),
        id: entry.service_id,
        scopes: entry.scopes.filter((scope) => listed.has(scope)),
        other: entry.scopes.filter((scope) => !listed.has(scope)).join(' '),
        requirement_type: entry.requirement_type,
      };
    }),
    resources: set.resource_scopes.map((entry) => ({
      key: rowKey(),
      id: entry.resource_id,
      scopes: [...entry.scopes],
      other: '',
      requirement_type: entry.requirement_type,
    })),
  };
}

export function permissionSetBody(form: PermissionSetForm): PermissionSetBody {
  return {
    name: form.name.trim(),
    description: form.description.trim() === '' ? null : form.description.trim(),
    service_scopes: form.services.map((row) => ({
      service_id: row.id,
      scopes: [...new Set([...row.scopes, ...row.other.split(/\s+/).filter((s) => s !== '')])],
      requirement_type: row.requirement_type,
    })),
    resource_scopes: form.resources.map((row) => ({
      resource_id: row.id,
      scopes: [...row.scopes],
      requirement_type: row.requirement_type,
    })),
  };
}

export function permissionSetFieldLabel(field: string): string {
  if (field === 'name') return 'Name';
  if (field === 'description') return 'Description';
  if (/\.service_id$/.test(field)) return 'Service';
  if (/\.resource_id$/.test(field)) return 'MCP server';
  if (/\.scopes(\.\d+)?$/.test(field)) return 'Scopes';
  if (/\.requirement_type$/.test(field)) return 'Requirement';
  return field;
}

/** The permission set rules in the person's words. */
export function permissionSetProblemWords(field: string, problem: string): string | undefined {
  if (/\.(service|resource)_id$/.test(field) && /UUID/i.test(problem))
    return field.startsWith('service') ? 'Choose a service.' : 'Choose an MCP server.';
  if (field === 'resource_scopes' && problem.startsWith('required when service_scopes is empty'))
    return 'A permission set covers at least one service or MCP server: add one.';
  if (field === 'service_scopes' && problem === 'duplicate service_id')
    return 'A service is listed twice: list each service once, with all its scopes.';
  if (field === 'resource_scopes' && problem === 'duplicate resource_id')
    return 'An MCP server is listed twice: list each MCP server once, with all its scopes.';
  if (field === 'service_scopes' && problem.startsWith('no service '))
    return 'A service of this set no longer exists (deleted meanwhile): remove it here.';
  if (/^resource_scopes\.\d+\.resource_id$/.test(field) && problem.startsWith('no resource '))
    return 'This MCP server no longer exists (deleted meanwhile): remove it here.';
  if (/^resource_scopes\.\d+\.scopes$/.test(field) && / does not offer /.test(problem))
    return `The MCP server does not offer ${problem.replace(/^.* does not offer /, '')} (any more): choose among the scopes it offers.`;
  if (/^resource_scopes\.\d+\.scopes$/.test(field) && /at least 1/.test(problem))
    return 'Choose at least one scope of this MCP server.';
  return undefined;
}
