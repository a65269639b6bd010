import type { Agent, AgentBody, RequirementType } from './types';

/** The DPoP policy as the form offers it: the agent's `dpop_bound_access_tokens` `null`, `true` or `false` (RFC 9449 §5.2). */
export type DpopChoice = 'default' | 'required' | 'optional';

/** What the agent form holds while the administrator edits it: text as typed, lists one entry per input. */
export interface AgentFormValues {
  readonly display_name: string;
  readonly description: string;
  readonly canonical_id: string;
  readonly client_id: string;
  readonly logo_url: string;
  readonly governance_url: string;
  readonly user_documentation_url: string;
  readonly agent_interface_url: string;
  readonly redirect_uris: readonly string[];
  readonly client_uris: readonly string[];
  readonly allowed_scopes: readonly string[];
  readonly allowed_resources: readonly string[];
  readonly dpop: DpopChoice;
  readonly permission_sets: readonly {
    readonly permission_set_id: string;
    readonly requirement_type: RequirementType;
  }[];
}

/** The list fields of the form (one input per entry). */
export type ListField = 'redirect_uris' | 'client_uris' | 'allowed_scopes' | 'allowed_resources';

/** The form's fields, each the body property it becomes: an API error naming one is shown at it. */
export const AGENT_FIELDS = [
  'display_name',
  'description',
  'canonical_id',
  'client_id',
  'logo_url',
  'governance_url',
  'user_documentation_url',
  'agent_interface_url',
  'redirect_uris',
  'client_uris',
  'allowed_scopes',
  'allowed_resources',
  'dpop_bound_access_tokens',
  'permission_sets',
] as const;
export type AgentField = (typeof AGENT_FIELDS)[number];

/** Each field's label, as the form shows it and as an error at it names it. */
export const AGENT_FIELD_LABELS: Readonly<Record<AgentField, string>> = {
  display_name: 'Name',
  description: 'Description',
  canonical_id: 'Canonical id',
  client_id: 'Upstream client id',
  logo_url: 'Logo URL',
  governance_url: 'Governance URL',
  user_documentation_url: 'User documentation URL',
  agent_interface_url: 'Agent interface URL',
  redirect_uris: 'Redirect URIs',
  client_uris: 'Client metadata document URLs',
  allowed_scopes: 'Allowed scopes',
  allowed_resources: 'Allowed MCP servers and resources',
  dpop_bound_access_tokens: 'DPoP proof',
  permission_sets: 'Permission sets',
};

export const EMPTY_AGENT: AgentFormValues = {
  display_name: '',
  description: '',
  canonical_id: '',
  client_id: '',
  logo_url: '',
  governance_url: '',
  user_documentation_url: '',
  agent_interface_url: '',
  redirect_uris: [],
  client_uris: [],
  allowed_scopes: [],
  allowed_resources: [],
  dpop: 'default',
  permission_sets: [],
};

function dpopChoiceOf(value: boolean | null): DpopChoice {
  if (value === null) return 'default';
  return value ? 'required' : 'optional';
}

function dpopValueOf(choice: DpopChoice): boolean | null {
  switch (choice) {
    case 'default':
      return null;
    case 'required':
      return true;
    case 'optional':
      return false;
  }
}

/** The form filled with a registered agent's values. */
export function valuesOf(agent: Agent): AgentFormValues {
  return {
    display_name: agent.display_name,
    description: agent.description ?? '',
    canonical_id: agent.canonical_id ?? '',
    client_id: agent.client_id ?? '',
    logo_url: agent.logo_url ?? '',
    governance_url: agent.governance_url ?? '',
    user_documentation_url: agent.user_documentation_url ?? '',
    agent_interface_url: agent.agent_interface_url ?? '',
    redirect_uris: [...agent.redirect_uris],
    client_uris: [...agent.client_uris],
    allowed_scopes: [...agent.allowed_scopes],
    allowed_resources: [...agent.allowed_resources],
    dpop: dpopChoiceOf(agent.dpop_bound_access_tokens),
    permission_sets: agent.permission_sets.map(({ permission_set_id, requirement_type }) => ({
      permission_set_id,
      requirement_type,
    })),
  };
}

/** A text field's value for the API: trimmed, and `null` when nothing is left (the API's "none"). */
function optional(value: string): string | null {
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** A list's entries for the API: trimmed, the empty inputs left out. */
function entries(values: readonly string[]): string[] {
  return values.map((value) => value.trim()).filter((value) => value !== '');
}

/**
 * The body of `POST /api/agents` or `PUT /api/agents/{id}` (a full replacement: every field is sent). The name is
 * sent as typed, untrimmed-empty included, so the API's own rule says what is wrong with it.
 */
export function bodyOf(values: AgentFormValues): AgentBody {
  return {
    display_name: values.display_name.trim(),
    description: values.description.trim() === '' ? null : values.description,
    canonical_id: optional(values.canonical_id),
    client_id: optional(values.client_id),
    logo_url: optional(values.logo_url),
    governance_url: optional(values.governance_url),
    user_documentation_url: optional(values.user_documentation_url),
    agent_interface_url: optional(values.agent_interface_url),
    redirect_uris: entries(values.redirect_uris),
    client_uris: entries(values.client_uris),
    allowed_scopes: entries(values.allowed_scopes),
    allowed_resources: entries(values.allowed_resources),
    dpop_bound_access_tokens: dpopValueOf(values.dpop),
    permission_sets: values.permission_sets.map(({ permission_set_id, requirement_type }) => ({
      permission_set_id,
      requirement_type,
    })),
  };
}

/** The form field an API detail names: `permission_sets.0.requirement_type` is at Permission sets. */
export function formFieldOf(detailField: string): AgentField | undefined {
  const top = detailField.split(/[.[]/, 1)[0] ?? '';
  return (AGENT_FIELDS as readonly string[]).includes(top) ? (top as AgentField) : undefined;
}

/** Plain words for the validator's phrasings a person would stumble on. */
const PHRASES: readonly [RegExp, (...groups: string[]) => string][] = [
  [/^must be longer than or equal to 1 characters?$/, () => 'is required'],
  [/^must be longer than or equal to (\d+) characters?$/, (n = '') => `must be at least ${n} characters`],
  [/^must be shorter than or equal to (\d+) characters?$/, (n = '') => `must be at most ${n} characters`],
  [/^must contain no more than (\d+) elements$/, (n = '') => `may have at most ${n} entries`],
];

/**
 * One API problem in the form's words: the field's label instead of its JSON name (`display_name must be longer than
 * or equal to 1 characters` → `Name must not be empty`), the rest as the API wrote it.
 */
export function problemInWords(field: AgentField, problem: string): string {
  const label = AGENT_FIELD_LABELS[field];
  const rest = problem.startsWith(`${field} `)
    ? problem.slice(field.length + 1)
    : problem.replace(/^each value in \S+ /, 'each entry ');
  for (const [pattern, words] of PHRASES) {
    const match = pattern.exec(rest);
    if (match !== null) return `${label} ${words(...match.slice(1))}.`;
  }
  const sentence = rest === problem ? `${label}: ${problem}` : `${label} ${rest}`;
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/** A refused write as the form shows it: problems at their fields, and what belongs to no field. */
export interface FormProblems {
  readonly fields: Partial<Record<AgentField, string>>;
  /** The API's message when no field holds it (a failure the form cannot place). */
  readonly general: string | undefined;
}

/** The shape of a refused write this form reads (the console's `ApiFailure`). */
export interface RefusedWrite {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly details: readonly { readonly field: string; readonly problem: string }[];
}

const CANONICAL_TAKEN = /^canonical_id "(.*)" is already used by another agent$/;

/**
 * The problems of a refused create or replace, each at its field in words; a taken canonical id (409 `conflict`)
 * at the canonical id, saying what to do.
 */
export function problemsOf(failure: RefusedWrite): FormProblems {
  const fields: Partial<Record<AgentField, string>> = {};
  let placed = false;
  for (const { field, problem } of failure.details) {
    const at = formFieldOf(field);
    if (at === undefined) continue;
    const words = problemInWords(at, problem);
    fields[at] = fields[at] === undefined ? words : `${fields[at]} ${words}`;
    placed = true;
  }
  const taken = failure.status === 409 ? CANONICAL_TAKEN.exec(failure.message) : null;
  if (taken !== null) {
    fields.canonical_id = `Another agent already has the canonical id “${taken[1] ?? ''}”: a canonical id names one agent. Choose another, or leave it empty.`;
    placed = true;
  }
  const unplaced = failure.details.some(({ field }) => formFieldOf(field) === undefined);
  return { fields, general: placed && !unplaced ? undefined : failure.message };
}
