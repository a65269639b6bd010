import { useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { ApiFailure } from '../api/client';
import { useReadOnly } from '../api/queries';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ConflictNotice } from '../components/ConflictNotice';
import { Field } from '../components/Field';
import { FormErrors } from '../components/FormErrors';
import { PageTitle } from '../components/PageTitle';
import { ReadOnlyNotice, WriteButton } from '../components/ReadOnly';
import { useResources } from '../resources/queries';
import { NotFoundHere } from '../services/NotFoundHere';
import { formProblems, listed } from '../services/problems';
import { grantsReferencing, useServices } from '../services/queries';
import { EntryEditor, type EntryOption } from './EntryEditor';
import {
  emptyPermissionSetForm,
  permissionSetBody,
  permissionSetFieldLabel,
  permissionSetForm,
  permissionSetProblemWords,
  type PermissionSet,
  type PermissionSetForm,
} from './permission-set-form';
import { agentsAssigned, useDeletePermissionSet, usePermissionSet, useSavePermissionSet } from './queries';
import '../services/registry.css';

const SHOWN = ['name', 'description', 'service_scopes', 'resource_scopes'];

/** `/permission-sets/new` and `/permission-sets/:id`: what an agent may ask people for, service by service. */
export function PermissionSetPage() {
  const { id } = useParams();
  const set = usePermissionSet(id);
  const services = useServices();
  const resources = useResources();
  if (services.isPending || resources.isPending || (id !== undefined && set.isPending))
    return (
      <p className="loading" role="status">
        Loading the permission set…
      </p>
    );
  if (services.isError || resources.isError)
    return (
      <div className="notice danger" role="alert">
        The services and MCP servers could not be loaded: {(services.error ?? resources.error)?.message}
      </div>
    );
  const serviceOptions: EntryOption[] = services.data.map((s) => ({
    id: s.id,
    name: s.display_name,
    scopes: s.scopes,
  }));
  const resourceOptions: EntryOption[] = resources.data.items.map((r) => ({
    id: r.id,
    name: r.display_name,
    scopes: r.scopes,
  }));
  if (id === undefined) return <SetEditor key="new" services={serviceOptions} resources={resourceOptions} />;
  if (set.isError)
    return (
      <NotFoundHere error={set.error} what="permission set" list="/permission-sets" listName="All permission sets" />
    );
  if (set.data === undefined) return null;
  return <SetEditor key={set.data.id} set={set.data} services={serviceOptions} resources={resourceOptions} />;
}

function SetEditor(props: {
  readonly set?: PermissionSet;
  readonly services: readonly EntryOption[];
  readonly resources: readonly EntryOption[];
}) {
  const { set, services, resources } = props;
  const navigate = useNavigate();
  const justCreated = (useLocation().state as { created?: boolean } | null)?.created === true;
  const readOnly = useReadOnly();
  const offered = (serviceId: string) => services.find((s) => s.id === serviceId)?.scopes.map((s) => s.scope) ?? [];
  const [form, setForm] = useState<PermissionSetForm>(() =>
    set ? permissionSetForm(set, offered) : emptyPermissionSetForm(),
  );
  const [saved, setSaved] = useState(false);
  const save = useSavePermissionSet(set?.id);
  const failure = save.error instanceof ApiFailure ? save.error : null;
  const errors =
    failure?.status === 400 ? formProblems(failure.details, permissionSetFieldLabel, permissionSetProblemWords) : {};
  // A 409 on a save: the name is another set's. Said at the name field, where it is fixed.
  const duplicate = failure?.status === 409;
  if (duplicate)
    errors.name = `Another permission set is named “${form.name.trim()}”: names are unique. Choose another name, or edit that set.`;
  const update = <K extends keyof PermissionSetForm>(key: K, value: PermissionSetForm[K]) =>
    setForm((f) => ({ ...f, [key]: value }));
  const name = set?.name;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    save.mutate(permissionSetBody(form), {
      onSuccess: (answer) => {
        if (set === undefined) void navigate(`/permission-sets/${answer.id}`, { state: { created: true } });
        else {
          setForm(permissionSetForm(answer, offered));
          setSaved(true);
        }
      },
    });
  };

  return (
    <>
      <p className="back-link">
        <Link to="/permission-sets">All permission sets</Link>
      </p>
      <PageTitle
        title={name ?? 'New permission set'}
        lead="What an agent assigned this set may ask people for: services and MCP servers, with their scopes. People allow or refuse it on the consent page."
      />
      <ReadOnlyNotice />
      {justCreated && set && !saved ? (
        <p className="notice success" role="status">
          {set.name} is created. Assign it to agents on their pages.
        </p>
      ) : null}
      {saved ? (
        <div className="notice success" role="status">
          Saved. People see the change the next time an agent asks them.
        </div>
      ) : null}
      {duplicate ? (
        <ConflictNotice
          what={name !== undefined ? `${name} was not saved.` : 'The permission set was not created.'}
          why={`Another permission set is already named “${form.name.trim()}”. Choose another name.`}
        />
      ) : null}
      <FormErrors failure={duplicate ? null : failure} fields={SHOWN} />
      <form
        className="registry-form"
        onSubmit={submit}
        noValidate
        aria-label={name ? `Edit ${name}` : 'New permission set'}
      >
        <fieldset disabled={readOnly}>
          <legend>About the set</legend>
          <Field label="Name" name="name" hint="Unique. People read it on the consent page." error={errors.name}>
            <input
              type="text"
              value={form.name}
              placeholder="Read your calendar"
              onChange={(e) => update('name', e.target.value)}
            />
          </Field>
          <Field label="Description (optional)" name="description" error={errors.description}>
            <textarea
              rows={2}
              value={form.description}
              placeholder="Lets the agent see your calendars and events"
              onChange={(e) => update('description', e.target.value)}
            />
          </Field>
        </fieldset>
        <EntryEditor
          kind="service"
          rows={form.services}
          options={services}
          onChange={(rows) => update('services', rows)}
          errors={errors}
          disabled={readOnly}
        />
        <EntryEditor
          kind="resource"
          rows={form.resources}
          options={resources}
          onChange={(rows) => update('resources', rows)}
          errors={errors}
          disabled={readOnly}
        />
        <div className="actions">
          <WriteButton type="submit" className="button primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : set ? 'Save changes' : 'Create permission set'}
          </WriteButton>
        </div>
      </form>
      {set ? <DeleteSet set={set} /> : null}
    </>
  );
}

function DeleteSet({ set }: { readonly set: PermissionSet }) {
  const navigate = useNavigate();
  const remove = useDeletePermissionSet(set.id);
  const [open, setOpen] = useState(false);
  const [conflict, setConflict] = useState<string | null>(null);
  const confirm = () =>
    remove.mutate(undefined, {
      onSuccess: () => void navigate('/permission-sets', { state: { deleted: set.name } }),
      onError: (error) => {
        if (!(error instanceof ApiFailure && error.status === 409)) return;
        setOpen(false);
        void whySetInUse(set).then(setConflict);
      },
    });
  const failure = remove.error instanceof ApiFailure && remove.error.status !== 409 ? remove.error : null;
  return (
    <section className="panel danger-zone" aria-labelledby="delete-set-heading">
      <h2 id="delete-set-heading">Delete this permission set</h2>
      <p>Agents can no longer ask people for it. This cannot be undone.</p>
      {conflict !== null ? <ConflictNotice what={`${set.name} cannot be deleted`} why={conflict} /> : null}
      <WriteButton className="button danger" onClick={() => setOpen(true)}>
        Delete {set.name}…
      </WriteButton>
      <ConfirmDialog
        open={open}
        title={`Delete ${set.name}?`}
        confirmLabel={`Delete ${set.name}`}
        destructive
        busy={remove.isPending}
        failure={failure}
        onConfirm={confirm}
        onCancel={() => setOpen(false)}
      >
        <p>
          Agents can no longer ask people for “{set.name}”. The broker refuses while an agent is assigned the set or a
          person&apos;s grant still delegates it.
        </p>
      </ConfirmDialog>
    </section>
  );
}

/** Why the API refused the delete (409): the agents assigned the set, else people's grants. */
async function whySetInUse(set: PermissionSet): Promise<string> {
  let agents: string[] = [];
  try {
    agents = (await agentsAssigned(set.id)).map((name) => `“${name}”`);
  } catch {
    // The explanation below still holds without the names.
  }
  if (agents.length === 1)
    return `while the agent ${agents[0]} is assigned it. Remove the set from that agent first (on the agent's page).`;
  if (agents.length > 1)
    return `while the agents ${agents.join(', ')} are assigned it. Remove the set from those agents first (on their pages).`;
  const holders = await grantsReferencing({ permission_set_id: set.id });
  if (holders.length > 0)
    return `while active grants delegate it to agents: ${listed(holders)}. Revoke those grants on the agents' pages first, or wait until they expire.`;
  return `while people's active grants delegate it to agents. Revoke those grants first, or wait until they expire.`;
}
