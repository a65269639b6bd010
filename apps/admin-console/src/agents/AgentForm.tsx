import { useState, type FormEvent } from 'react';
import type { ApiFailure } from '../api/client';
import { Field } from '../components/Field';
import { FormErrors } from '../components/FormErrors';
import { WriteButton } from '../components/ReadOnly';
import {
  AGENT_FIELDS,
  AGENT_FIELD_LABELS,
  bodyOf,
  problemsOf,
  type AgentFormValues,
  type ListField as ListName,
} from './agent-form';
import { DpopPolicy } from './DpopPolicy';
import { ListField } from './ListField';
import { PermissionSetChoice } from './PermissionSetChoice';
import type { AgentBody } from './types';

type TextName =
  | 'display_name'
  | 'canonical_id'
  | 'client_id'
  | 'logo_url'
  | 'governance_url'
  | 'user_documentation_url'
  | 'agent_interface_url';

const LINKS: readonly { name: TextName; hint: string }[] = [
  {
    name: 'logo_url',
    hint: 'Optional, shown to people on the consent page: https, or http on this machine only.',
  },
  {
    name: 'governance_url',
    hint: 'Optional: where people read who runs this agent and under which policy.',
  },
  {
    name: 'user_documentation_url',
    hint: 'Optional: where people learn what the agent does.',
  },
  {
    name: 'agent_interface_url',
    hint: 'Optional: where people use the agent.',
  },
];

const LISTS: readonly {
  name: ListName;
  itemLabel: string;
  hint: string;
  emptyText: string;
  placeholder: string;
}[] = [
  {
    name: 'redirect_uris',
    itemLabel: 'Redirect URI',
    hint: 'Where the broker sends the person back after they allow the agent (RFC 6749 §3.1.2): https, http on this machine only, or an app scheme such as com.example.app:/callback. No fragment.',
    emptyText: 'None: the agent cannot use the authorization code flow.',
    placeholder: 'https://assistant.example.com/oauth2/callback',
  },
  {
    name: 'client_uris',
    itemLabel: 'Document URL',
    hint: 'Client ID Metadata Documents this agent publishes for its clients: https, the origin in lower case, then a path; * stands for one whole path segment.',
    emptyText: 'None.',
    placeholder: 'https://assistant.example.com/clients/*/metadata.json',
  },
  {
    name: 'allowed_scopes',
    itemLabel: 'Scope',
    hint: 'The scopes this agent may ask for, one per entry (no spaces).',
    emptyText: 'None listed: no restriction on the scopes it asks for.',
    placeholder: 'calendar.read',
  },
  {
    name: 'allowed_resources',
    itemLabel: 'Resource',
    hint: 'MCP servers and other resources (RFC 8707) this agent may ask tokens for from this broker, on top of the broker-wide list: an exact URI, or a prefix ending in /.',
    emptyText: 'None listed: no restriction for this agent beyond the broker-wide list.',
    placeholder: 'https://tools.example.com/mcp',
  },
];

/**
 * Every field of an agent, for registering one or changing it (a full replacement). The API judges the values: a
 * refusal is shown at each field it names, in words; nothing is checked here that the API would not.
 */
export function AgentForm(props: {
  readonly initial: AgentFormValues;
  readonly submitLabel: string;
  readonly busy: boolean;
  readonly failure: ApiFailure | null;
  readonly readOnly: boolean;
  readonly onSubmit: (body: AgentBody) => void;
  readonly onCancel?: () => void;
  /** The level of the form's section headings: under the page's title (h2) or under a section of the page (h3). */
  readonly headingLevel?: 'h2' | 'h3';
}) {
  const { initial, submitLabel, busy, failure, readOnly, onSubmit, onCancel, headingLevel: Heading = 'h2' } = props;
  const [values, setValues] = useState<AgentFormValues>(initial);
  const problems = failure === null ? { fields: {}, general: undefined } : problemsOf(failure);
  const errors: Partial<Record<string, string>> = problems.fields;
  const set = <K extends keyof AgentFormValues>(key: K, value: AgentFormValues[K]) =>
    setValues((old) => ({ ...old, [key]: value }));
  const text = (name: TextName, hint: string) => (
    <Field label={AGENT_FIELD_LABELS[name]} name={name} hint={hint} error={errors[name]}>
      <input
        type="text"
        value={values[name]}
        readOnly={readOnly}
        spellCheck={false}
        autoComplete="off"
        onChange={(event) => set(name, event.target.value)}
      />
    </Field>
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!readOnly) onSubmit(bodyOf(values));
  };
  return (
    <form className="agent-form" noValidate onSubmit={submit} aria-label={submitLabel}>
      <FormErrors failure={failure} fields={AGENT_FIELDS} />
      <section className="form-section" aria-labelledby="agent-form-identity">
        <Heading id="agent-form-identity">Identity</Heading>
        <Field
          label={AGENT_FIELD_LABELS.display_name}
          name="display_name"
          hint="What people see on the consent page and in their console."
          error={errors.display_name}
        >
          <input
            type="text"
            value={values.display_name}
            readOnly={readOnly}
            autoComplete="off"
            onChange={(event) => set('display_name', event.target.value)}
          />
        </Field>
        <Field
          label={AGENT_FIELD_LABELS.description}
          name="description"
          hint="Optional: what the agent does, in a sentence or two."
          error={errors.description}
        >
          <textarea
            rows={3}
            value={values.description}
            readOnly={readOnly}
            onChange={(event) => set('description', event.target.value)}
          />
        </Field>
        {text(
          'canonical_id',
          'Optional: a stable name other systems use for this agent, such as expense-assistant (letters, digits, . _ -; not shaped like a UUID). Unique.',
        )}
        {text('client_id', "Optional, proxy mode only: the agent's client id at the upstream authorization server.")}
      </section>
      <section className="form-section" aria-labelledby="agent-form-links">
        <Heading id="agent-form-links">Links</Heading>
        {LINKS.map((link) => (
          <div key={link.name}>{text(link.name, link.hint)}</div>
        ))}
      </section>
      <section className="form-section" aria-labelledby="agent-form-access">
        <Heading id="agent-form-access">What it may ask for</Heading>
        <PermissionSetChoice
          value={values.permission_sets}
          error={errors.permission_sets}
          readOnly={readOnly}
          onChange={(value) => set('permission_sets', value)}
        />
        {LISTS.map((list) => (
          <ListField
            key={list.name}
            name={list.name}
            label={AGENT_FIELD_LABELS[list.name]}
            itemLabel={list.itemLabel}
            hint={list.hint}
            emptyText={list.emptyText}
            placeholder={list.placeholder}
            values={values[list.name]}
            error={errors[list.name]}
            readOnly={readOnly}
            onChange={(value) => set(list.name, value)}
          />
        ))}
        <DpopPolicy
          value={values.dpop}
          error={errors.dpop_bound_access_tokens}
          readOnly={readOnly}
          onChange={(value) => set('dpop', value)}
        />
      </section>
      <div className="actions form-actions">
        {onCancel !== undefined ? (
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
        <WriteButton type="submit" className="button primary" disabled={busy}>
          {busy ? 'Saving…' : submitLabel}
        </WriteButton>
      </div>
    </form>
  );
}
