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
import { formProblems, listed, problemInWords } from './problems';
import {
  fetchSetsCovering,
  grantsReferencing,
  useDeleteService,
  useSaveService,
  useService,
  useServices,
} from './queries';
import { NotFoundHere } from './NotFoundHere';
import { ScopeEditor } from './ScopeEditor';
import {
  AUTH_METHODS,
  emptyServiceForm,
  serviceBody,
  serviceFieldLabel,
  serviceForm,
  serviceProblemWords,
  type Service,
  type ServiceForm,
} from './service-form';
import { UriListEditor } from './UriListEditor';
import './registry.css';

/** The fields the form shows at their control (FormErrors lists the problems of any other). */
const SHOWN = [
  'display_name',
  'description',
  'logo_url',
  'issuer_uri',
  'authorization_endpoint',
  'token_endpoint',
  'client_id',
  'client_secret',
  'token_endpoint_auth_method',
  'scopes',
  'protected_resources',
];

/** `/services/new` and `/services/:id`: register or edit a third-party service; its redirect URI to give the provider. */
export function ServicePage() {
  const { id } = useParams();
  const service = useService(id);
  if (id === undefined) return <ServiceEditor key="new" />;
  if (service.isPending)
    return (
      <p className="loading" role="status">
        Loading the service…
      </p>
    );
  if (service.isError)
    return <NotFoundHere error={service.error} what="service" list="/services" listName="All services" />;
  return <ServiceEditor key={service.data.id} service={service.data} />;
}

function ServiceEditor({ service }: { readonly service?: Service }) {
  const navigate = useNavigate();
  const location = useLocation();
  const justCreated = (location.state as { created?: boolean } | null)?.created === true;
  const readOnly = useReadOnly();
  const [form, setForm] = useState<ServiceForm>(() => (service ? serviceForm(service) : emptyServiceForm()));
  const [saved, setSaved] = useState(false);
  const [conflict, setConflict] = useState<string | null>(null);
  const save = useSaveService(service?.id);
  const services = useServices();

  const failure = save.error instanceof ApiFailure ? save.error : null;
  const errors = failure?.status === 400 ? formProblems(failure.details, serviceFieldLabel, serviceProblemWords) : {};
  const set = <K extends keyof ServiceForm>(key: K, value: ServiceForm[K]) => setForm((f) => ({ ...f, [key]: value }));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    setConflict(null);
    save.mutate(serviceBody(form, service), {
      onSuccess: (answer) => {
        if (service === undefined) void navigate(`/services/${answer.id}`, { state: { created: true } });
        else {
          setForm(serviceForm(answer));
          setSaved(true);
        }
      },
      onError: (error) => {
        if (error instanceof ApiFailure && error.status === 409)
          setConflict(explainResourceClash(error.message, services.data ?? [], service?.id));
      },
    });
  };

  const method = form.token_endpoint_auth_method;
  const hasStoredSecret = service?.client_secret === 'REDACTED';
  const name = service?.display_name;

  return (
    <>
      <p className="back-link">
        <Link to="/services">All services</Link>
      </p>
      <PageTitle
        title={name ?? 'Register a service'}
        lead="A third-party API with its own OAuth provider: people connect their account there, and agents act on it with the tokens the broker holds for them."
      />
      <ReadOnlyNotice />
      {service ? <CallbackPanel service={service} justCreated={justCreated && !saved} /> : null}
      {saved ? (
        <div className="notice success" role="status">
          Saved. Agents use the new settings from their next token exchange.
        </div>
      ) : null}
      {conflict !== null ? (
        <ConflictNotice
          what={name !== undefined ? `${name} was not saved.` : 'The service was not registered.'}
          why={conflict}
        />
      ) : null}
      <FormErrors failure={failure?.status === 409 ? null : failure} fields={SHOWN} />

      <form
        className="registry-form"
        onSubmit={submit}
        noValidate
        aria-label={name ? `Edit ${name}` : 'Register a service'}
      >
        <fieldset disabled={readOnly}>
          <legend>About the service</legend>
          <Field
            label="Name"
            name="display_name"
            hint="People see it on the consent page and in their connections."
            error={errors.display_name}
          >
            <input
              type="text"
              value={form.display_name}
              placeholder="Google Calendar"
              onChange={(e) => set('display_name', e.target.value)}
            />
          </Field>
          <Field label="Description (optional)" name="description" error={errors.description}>
            <textarea
              rows={2}
              value={form.description}
              placeholder="Your calendars and events"
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
              placeholder="https://calendar.example.com/logo.png"
              onChange={(e) => set('logo_url', e.target.value)}
            />
          </Field>
        </fieldset>

        <fieldset disabled={readOnly}>
          <legend>The provider</legend>
          <Field
            label="Issuer URL"
            name="issuer_uri"
            hint="The provider's OAuth issuer. The broker reads its endpoints from the issuer's metadata (RFC 8414, then OpenID Connect discovery): leave both endpoints below empty to use what it publishes."
            error={errors.issuer_uri}
          >
            <input
              type="url"
              className="mono"
              value={form.issuer_uri}
              placeholder="https://accounts.example.com"
              onChange={(e) => set('issuer_uri', e.target.value)}
            />
          </Field>
          <Field
            label="Authorization endpoint (optional)"
            name="authorization_endpoint"
            hint="Empty: discovered from the issuer."
            error={errors.authorization_endpoint}
          >
            <input
              type="url"
              className="mono"
              value={form.authorization_endpoint}
              placeholder="https://accounts.example.com/oauth2/authorize"
              onChange={(e) => set('authorization_endpoint', e.target.value)}
            />
          </Field>
          <Field
            label="Token endpoint (optional)"
            name="token_endpoint"
            hint="Empty: discovered from the issuer."
            error={errors.token_endpoint}
          >
            <input
              type="url"
              className="mono"
              value={form.token_endpoint}
              placeholder="https://accounts.example.com/oauth2/token"
              onChange={(e) => set('token_endpoint', e.target.value)}
            />
          </Field>
        </fieldset>

        <fieldset disabled={readOnly}>
          <legend>The broker&apos;s client at the provider</legend>
          <Field
            label="Client ID"
            name="client_id"
            hint={
              service
                ? 'The client ID the provider gave the broker.'
                : 'The client ID the provider gave the broker. Not registered there yet? Enter a placeholder: the redirect URI to register appears once the service is saved; then come back with the real client ID and secret.'
            }
            error={errors.client_id}
          >
            <input
              type="text"
              className="mono"
              autoComplete="off"
              spellCheck={false}
              value={form.client_id}
              placeholder="broker-client"
              onChange={(e) => set('client_id', e.target.value)}
            />
          </Field>
          <Field
            label="Client secret"
            name="client_secret"
            hint={
              method === 'none'
                ? 'A public client sends no secret.'
                : hasStoredSecret
                  ? 'Stored — leave empty to keep. Type a new one to replace it; it is never shown again.'
                  : 'Write-only: stored encrypted, never shown again.'
            }
            error={errors.client_secret}
          >
            <input
              type="password"
              autoComplete="new-password"
              value={form.client_secret}
              disabled={method === 'none'}
              onChange={(e) => set('client_secret', e.target.value)}
            />
          </Field>
          <fieldset
            className="choices"
            aria-describedby={errors.token_endpoint_auth_method ? 'auth-method-error' : undefined}
          >
            <legend>How the broker authenticates at the token endpoint</legend>
            {AUTH_METHODS.map((choice) => (
              <label key={choice.value} className="choice">
                <input
                  type="radio"
                  name="token_endpoint_auth_method"
                  value={choice.value}
                  checked={method === choice.value}
                  onChange={() => set('token_endpoint_auth_method', choice.value)}
                />
                <span>
                  {choice.label}
                  <span className="choice-hint">{choice.hint}</span>
                </span>
              </label>
            ))}
            {errors.token_endpoint_auth_method ? (
              <p className="field-error" id="auth-method-error">
                {errors.token_endpoint_auth_method}
              </p>
            ) : null}
          </fieldset>
        </fieldset>

        <ScopeEditor
          rows={form.scopes}
          onChange={(rows) => set('scopes', rows)}
          errors={errors}
          disabled={readOnly}
          descriptionRequired={false}
          scopeExample="calendar.read"
          descriptionExample="See your calendars and events"
        />

        <UriListEditor
          legend="Protected resources"
          hint="The provider's API addresses. An agent's token exchange names one of them (its resource) to get the person's token for this service. Each belongs to one service only."
          field="protected_resources"
          itemLabel="Resource URI"
          addLabel="Add a resource URI"
          placeholder="https://calendar.example.com/api"
          rows={form.protected_resources}
          onChange={(rows) => set('protected_resources', rows)}
          errors={errors}
          disabled={readOnly}
        />

        <div className="actions">
          <WriteButton type="submit" className="button primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : service ? 'Save changes' : 'Register service'}
          </WriteButton>
        </div>
      </form>
      {service ? <DeleteService service={service} /> : null}
    </>
  );
}

/** The redirect URI the admin registers at the provider: the API's `callback_url`, never computed here. */
function CallbackPanel({ service, justCreated }: { readonly service: Service; readonly justCreated: boolean }) {
  return (
    <section className="panel callback" aria-labelledby="callback-heading">
      {justCreated ? (
        <p className="notice success" role="status">
          {service.display_name} is registered. One step is left before anyone can connect: register the redirect URI
          below at the provider.
        </p>
      ) : null}
      <h2 id="callback-heading">Redirect URI</h2>
      <p>
        <strong>Register this redirect URI at the provider</strong>, exactly as shown, among the redirect URIs of the
        broker&apos;s client there, before anyone connects an account: the provider sends people back to it after they
        sign in (RFC 6749 §3.1.2).
      </p>
      <div className="copy-row">
        <code className="mono callback-url" id="callback-url">
          {service.callback_url}
        </code>
        <CopyButton value={service.callback_url} label="Copy redirect URI" />
      </div>
    </section>
  );
}

function DeleteService({ service }: { readonly service: Service }) {
  const navigate = useNavigate();
  const remove = useDeleteService(service.id);
  const [open, setOpen] = useState(false);
  const [conflict, setConflict] = useState<string | null>(null);
  const name = service.display_name;
  const confirm = () =>
    remove.mutate(undefined, {
      onSuccess: () => void navigate('/services', { state: { deleted: name } }),
      onError: (error) => {
        if (!(error instanceof ApiFailure && error.status === 409)) return;
        setOpen(false);
        void whyServiceInUse(service).then(setConflict);
      },
    });
  const failure = remove.error instanceof ApiFailure && remove.error.status !== 409 ? remove.error : null;
  return (
    <section className="panel danger-zone" aria-labelledby="delete-service-heading">
      <h2 id="delete-service-heading">Delete this service</h2>
      <p>
        Agents can no longer get tokens for {name}, and every person&apos;s connection to it (the tokens the broker
        holds for them) is deleted. This cannot be undone.
      </p>
      {conflict !== null ? <ConflictNotice what={`${name} cannot be deleted.`} why={conflict} /> : null}
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
          Agents stop getting tokens for {name} at once, and every person&apos;s connection to it is deleted: they would
          have to connect again if it is registered anew.
        </p>
      </ConfirmDialog>
    </section>
  );
}

/** Why the API refused to delete the service (409), naming the permission sets that cover it. */
async function whyServiceInUse(service: Service): Promise<string> {
  const name = service.display_name;
  let names: string[] = [];
  try {
    names = (await fetchSetsCovering({ service_id: service.id })).items.map((set) => `“${set.name}”`);
  } catch {
    // The explanation below still holds without the names.
  }
  if (names.length === 1)
    return `The permission set ${names[0]} names it. Remove ${name} from that set (or delete the set) first.`;
  if (names.length > 1)
    return `The permission sets ${names.join(', ')} name it. Remove ${name} from those sets (or delete them) first.`;
  const holders = await grantsReferencing({ service_id: service.id });
  if (holders.length > 0)
    return `Active grants still delegate it to agents: ${listed(holders)}. Revoke those grants on the agents' pages first, or wait until they expire.`;
  return `People's active grants still delegate ${name} to agents. Revoke those grants first, or wait until they expire.`;
}

/** A 409 on save: a protected resource URI is another service's, or a registered MCP server's. */
function explainResourceClash(message: string, services: readonly Service[], ownId: string | undefined): string {
  const owner = services.find(
    (other) => other.id !== ownId && other.protected_resources.some((uri) => message.includes(uri)),
  );
  if (owner !== undefined)
    return `A protected resource URI already belongs to the service “${owner.display_name}”, and a URI belongs to one service only. Remove it here, or from ${owner.display_name} first.`;
  const mcp = /is the registered protected resource "(.*)"/.exec(message);
  if (mcp !== null)
    return `A protected resource URI is the MCP server “${mcp[1]}”, which the broker issues tokens for itself. A URI is either a third-party service's API or an MCP server, never both.`;
  return problemInWords(message, 'The service');
}
