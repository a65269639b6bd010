import { useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { ApiFailure } from '../api/client';
import { useReadOnly } from '../api/queries';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ConflictNotice } from '../components/ConflictNotice';
import { CopyButton } from '../components/CopyButton';
import { Field } from '../components/Field';
import { FormErrors } from '../components/FormErrors';
import { PageTitle } from '../components/PageTitle';
import { ReadOnlyNotice, WriteButton } from '../components/ReadOnly';
import { NotFoundHere } from '../services/NotFoundHere';
import { formProblems } from '../services/problems';
import { fetchSetsCovering } from '../services/queries';
import { ScopeEditor } from '../services/ScopeEditor';
import { useDeleteResource, useResource, useResources, useSaveResource } from './queries';
import {
  emptyResourceForm,
  explainResourceConflict,
  resourceBody,
  resourceFieldLabel,
  resourceForm,
  resourceProblemWords,
  type Resource,
  type ResourceForm,
} from './resource-form';
import '../services/registry.css';

const SHOWN = ['display_name', 'description', 'logo_url', 'resource_uri', 'scopes'];

/** `/mcp-servers/new` and `/mcp-servers/:id`: register or edit an MCP server (the API's protected resource). */
export function ResourcePage() {
  const { id } = useParams();
  const resource = useResource(id);
  if (id === undefined) return <ResourceEditor key="new" />;
  if (resource.isPending)
    return (
      <p className="loading" role="status">
        Loading the MCP server…
      </p>
    );
  if (resource.isError)
    return <NotFoundHere error={resource.error} what="MCP server" list="/mcp-servers" listName="All MCP servers" />;
  return <ResourceEditor key={resource.data.id} resource={resource.data} />;
}

function ResourceEditor({ resource }: { readonly resource?: Resource }) {
  const navigate = useNavigate();
  const justCreated = (useLocation().state as { created?: boolean } | null)?.created === true;
  const readOnly = useReadOnly();
  const [form, setForm] = useState<ResourceForm>(() => (resource ? resourceForm(resource) : emptyResourceForm()));
  const [saved, setSaved] = useState(false);
  const [conflict, setConflict] = useState<string | null>(null);
  const save = useSaveResource(resource?.id);
  const others = useResources();

  const failure = save.error instanceof ApiFailure ? save.error : null;
  const errors = failure?.status === 400 ? formProblems(failure.details, resourceFieldLabel, resourceProblemWords) : {};
  const set = <K extends keyof ResourceForm>(key: K, value: ResourceForm[K]) =>
    setForm((f) => ({ ...f, [key]: value }));
  const name = resource?.display_name;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    setConflict(null);
    save.mutate(resourceBody(form), {
      onSuccess: (answer) => {
        if (resource === undefined) void navigate(`/mcp-servers/${answer.id}`, { state: { created: true } });
        else {
          setForm(resourceForm(answer));
          setSaved(true);
        }
      },
      onError: (error) => {
        if (error instanceof ApiFailure && error.status === 409)
          setConflict(explainResourceConflict(error.message, others.data?.items ?? [], resource?.id));
      },
    });
  };

  return (
    <>
      <p className="back-link">
        <Link to="/mcp-servers">All MCP servers</Link>
      </p>
      <PageTitle
        title={name ?? 'Register an MCP server'}
        lead="An MCP server (or any API) the broker issues tokens for itself: agents ask for a token whose audience is its resource URI, carrying only the scopes it offers."
      />
      <ReadOnlyNotice />
      {justCreated && resource && !saved ? (
        <p className="notice success" role="status">
          {resource.display_name} is registered. Add it to a permission set so agents can ask people for it.
        </p>
      ) : null}
      {resource ? <ResourceFacts resource={resource} /> : null}
      {saved ? (
        <div className="notice success" role="status">
          Saved.
        </div>
      ) : null}
      {conflict !== null ? (
        <ConflictNotice
          what={name !== undefined ? `${name} was not saved.` : 'The MCP server was not registered.'}
          why={conflict}
        />
      ) : null}
      <FormErrors failure={failure?.status === 409 ? null : failure} fields={SHOWN} />
      <form
        className="registry-form"
        onSubmit={submit}
        noValidate
        aria-label={name ? `Edit ${name}` : 'Register an MCP server'}
      >
        <fieldset disabled={readOnly}>
          <legend>About the MCP server</legend>
          <Field label="Name" name="display_name" hint="People see it on the consent page." error={errors.display_name}>
            <input
              type="text"
              value={form.display_name}
              placeholder="Expense reports"
              onChange={(e) => set('display_name', e.target.value)}
            />
          </Field>
          <Field label="Description (optional)" name="description" error={errors.description}>
            <textarea
              rows={2}
              value={form.description}
              placeholder="Files and submits expense reports"
              onChange={(e) => set('description', e.target.value)}
            />
          </Field>
          <Field
            label="Logo URL (optional)"
            name="logo_url"
            hint="https (http only for localhost)."
            error={errors.logo_url}
          >
            <input
              type="url"
              className="mono"
              value={form.logo_url}
              placeholder="https://expenses.example.com/logo.png"
              onChange={(e) => set('logo_url', e.target.value)}
            />
          </Field>
          <Field
            label="Resource URI"
            name="resource_uri"
            hint="The server's address as its metadata names it (RFC 9728 resource): https (http only for localhost), no fragment. Compared exactly as written: with a trailing slash it is another server."
            error={errors.resource_uri}
          >
            <input
              type="url"
              className="mono"
              spellCheck={false}
              value={form.resource_uri}
              placeholder="https://expenses.example.com/mcp"
              onChange={(e) => set('resource_uri', e.target.value)}
            />
          </Field>
        </fieldset>
        <ScopeEditor
          rows={form.scopes}
          onChange={(rows) => set('scopes', rows)}
          errors={errors}
          disabled={readOnly}
          descriptionRequired
          scopeExample="expenses.submit"
          descriptionExample="Submit expense reports for you"
        />
        <div className="actions">
          <WriteButton type="submit" className="button primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : resource ? 'Save changes' : 'Register MCP server'}
          </WriteButton>
        </div>
      </form>
      {resource ? <DeleteResource resource={resource} /> : null}
    </>
  );
}

function ResourceFacts({ resource }: { readonly resource: Resource }) {
  return (
    <section className="panel audience" aria-labelledby="resource-uri-heading">
      <h2 id="resource-uri-heading">Audience of its tokens</h2>
      <p>Tokens the broker issues for this MCP server carry this URI as their audience (aud); the server checks it.</p>
      <div className="copy-row">
        <code className="mono callback-url">{resource.resource_uri}</code>
        <CopyButton value={resource.resource_uri} label="Copy resource URI" />
      </div>
    </section>
  );
}

function DeleteResource({ resource }: { readonly resource: Resource }) {
  const navigate = useNavigate();
  const remove = useDeleteResource(resource.id);
  const [open, setOpen] = useState(false);
  const [conflict, setConflict] = useState<string | null>(null);
  const name = resource.display_name;
  const confirm = () =>
    remove.mutate(undefined, {
      onSuccess: () => void navigate('/mcp-servers', { state: { deleted: name } }),
      onError: (error) => {
        if (!(error instanceof ApiFailure && error.status === 409)) return;
        setOpen(false);
        void whyResourceInUse(resource).then(setConflict);
      },
    });
  const failure = remove.error instanceof ApiFailure && remove.error.status !== 409 ? remove.error : null;
  return (
    <section className="panel danger-zone" aria-labelledby="delete-resource-heading">
      <h2 id="delete-resource-heading">Delete this MCP server</h2>
      <p>Agents can no longer get tokens for {name}. This cannot be undone.</p>
      {conflict !== null ? <ConflictNotice what="This MCP server cannot be deleted" why={conflict} /> : null}
      <WriteButton className="button danger" onClick={() => setOpen(true)}>
        Delete {name}…
      </WriteButton>
      <ConfirmDialog
        open={open}
        title={`Delete ${name}?`}
        confirmLabel={`Delete ${name}`}
        destructive
        busy={remove.isPending}
        failure={failure}
        onConfirm={confirm}
        onCancel={() => setOpen(false)}
      >
        <p>
          The broker stops issuing tokens for <code className="mono">{resource.resource_uri}</code> at once; tokens
          already issued stay valid until they expire.
        </p>
      </ConfirmDialog>
    </section>
  );
}

/** Why the API refused the delete (409), naming the permission sets that name the MCP server. */
async function whyResourceInUse(resource: Resource): Promise<string> {
  let names: string[] = [];
  try {
    names = (await fetchSetsCovering({ resource_id: resource.id })).items.map((set) => `“${set.name}”`);
  } catch {
    // The explanation below still holds without the names.
  }
  if (names.length === 1) return `while the permission set ${names[0]} names it. Remove it from that set first.`;
  if (names.length > 1)
    return `while the permission sets ${names.join(', ')} name it. Remove it from those sets first.`;
  return `while people's active grants delegate it to agents. Revoke those grants first, or wait until they expire.`;
}
