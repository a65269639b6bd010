import type { components } from '../api/admin-api';

export type Service = components['schemas']['ServiceResponse'];
export type ServiceBody = components['schemas']['ServiceDto'];
export type AuthMethod = Service['token_endpoint_auth_method'];

/** One row of an editable list; `key` keeps React's identity of a row while rows are added and removed. */
export interface ScopeRow {
  readonly key: number;
  readonly scope: string;
  readonly description: string;
}

export interface UriRow {
  readonly key: number;
  readonly value: string;
}

/** What the service form holds: every field as typed (empty strings for "none"). */
export interface ServiceForm {
  readonly display_name: string;
  readonly description: string;
  readonly logo_url: string;
  readonly issuer_uri: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly client_id: string;
  /** A new secret; empty keeps the stored one (editing) or gives none (registering). */
  readonly client_secret: string;
  readonly token_endpoint_auth_method: AuthMethod;
  readonly scopes: readonly ScopeRow[];
  readonly protected_resources: readonly UriRow[];
}

/** How the broker proves itself at the provider's token endpoint (RFC 7591 §2), in words. */
export const AUTH_METHODS: readonly { value: AuthMethod; label: string; hint: string }[] = [
  {
    value: 'client_secret_basic',
    label: 'Client secret in the Authorization header',
    hint: 'HTTP Basic (client_secret_basic). What most providers expect.',
  },
  {
    value: 'client_secret_post',
    label: 'Client secret in the request body',
    hint: 'Sent as a form field (client_secret_post), for providers that ask for it.',
  },
  {
    value: 'none',
    label: 'No secret (public client)',
    hint: 'The broker sends only its client ID and PKCE (none). A stored secret is removed.',
  },
];

export function authMethodWords(method: AuthMethod): string {
  return AUTH_METHODS.find((m) => m.value === method)?.label ?? method;
}

let nextKey = 1;
/** A fresh row key (unique in this page's life). */
export function rowKey(): number {
  nextKey += 1;
  return nextKey;
}

export function emptyServiceForm(): ServiceForm {
  return {
    display_name: '',
    description: '',
    logo_url: '',
    issuer_uri: '',
    authorization_endpoint: '',
    token_endpoint: '',
    client_id: '',
    client_secret: '',
    token_endpoint_auth_method: 'client_secret_basic',
    scopes: [],
    protected_resources: [],
  };
}

export function serviceForm(service: Service): ServiceForm {
  return {
    display_name: service.display_name,
    description: service.description ?? '',
    logo_url: service.logo_url ?? '',
    issuer_uri: service.issuer_uri,
    authorization_endpoint: service.authorization_endpoint,
    token_endpoint: service.token_endpoint,
    client_id: service.client_id,
    client_secret: '',
    token_endpoint_auth_method: service.token_endpoint_auth_method,
    scopes: service.scopes.map((s) => ({ key: rowKey(), scope: s.scope, description: s.description })),
    protected_resources: service.protected_resources.map((value) => ({ key: rowKey(), value })),
  };
}

const orNull = (value: string): string | null => (value.trim() === '' ? null : value.trim());

/**
 * The body of POST (no `existing`) or PUT. Empty endpoints are left to discovery from the issuer; an empty secret
 * is omitted (PUT keeps the stored one); a public client sends `client_secret: null`, removing a stored one.
 */
export function serviceBody(form: ServiceForm, existing?: Service): ServiceBody {
  const method = form.token_endpoint_auth_method;
  const body: ServiceBody = {
    display_name: form.display_name.trim(),
    description: orNull(form.description),
    logo_url: orNull(form.logo_url),
    client_id: form.client_id.trim(),
    token_endpoint_auth_method: method,
    issuer_uri: form.issuer_uri.trim(),
    authorization_endpoint: orNull(form.authorization_endpoint),
    token_endpoint: orNull(form.token_endpoint),
    scopes: form.scopes.map((row) => ({ scope: row.scope.trim(), description: row.description.trim() })),
    protected_resources: form.protected_resources.map((row) => row.value.trim()),
  };
  if (method === 'none') {
    if (existing?.client_secret === 'REDACTED') body.client_secret = null;
  } else if (form.client_secret !== '') {
    body.client_secret = form.client_secret;
  }
  return body;
}

/** The form's label of an API field path, for the words of its problem. */
export function serviceFieldLabel(field: string): string {
  if (/^scopes\.\d+\.scope$/.test(field)) return 'Scope';
  if (/^scopes\.\d+\.description$/.test(field)) return 'Description';
  if (/^protected_resources(\.\d+)?$/.test(field)) return 'Protected resource URI';
  return SERVICE_LABELS[field] ?? field;
}

export const SERVICE_LABELS: Readonly<Record<string, string>> = {
  display_name: 'Name',
  description: 'Description',
  logo_url: 'Logo URL',
  issuer_uri: 'Issuer URL',
  authorization_endpoint: 'Authorization endpoint',
  token_endpoint: 'Token endpoint',
  client_id: 'Client ID',
  client_secret: 'Client secret',
  token_endpoint_auth_method: 'How the broker authenticates',
  scopes: 'Scopes',
};

/** The service rules the API states in its own words, said for the person at the field. */
export function serviceProblemWords(field: string, problem: string): string | undefined {
  if (field === 'client_secret' && problem === 'required')
    return 'A client secret is required with this sign-in method: paste the secret the provider gave you, or choose "No secret (public client)".';
  if (field === 'client_secret' && problem.startsWith('must be null'))
    return 'A public client has no secret: clear the secret, or choose a method that sends one.';
  if (field === 'issuer_uri' && problem.startsWith('discovery of'))
    return "The broker could not read the provider's endpoints from this issuer (no usable metadata at its /.well-known addresses; the reason is in the broker's log). Check the issuer URL, or give the authorization and token endpoints below.";
  if (field === 'scopes' && problem === 'duplicate scope')
    return 'A scope is listed more than once: keep each scope once.';
  return undefined;
}
