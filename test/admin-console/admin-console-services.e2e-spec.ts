import type { RecordedPage } from '@broker/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewAdminPage, startAdminConsoleFixture, type AdminConsoleFixture } from '../support/admin-console-fixture';

const IDP = 'https://accounts.example.com';

interface ServiceAnswer {
  id: string;
  display_name: string;
  client_secret: 'REDACTED' | null;
  token_endpoint_auth_method: string;
  callback_url: string;
  scopes: { scope: string; description: string }[];
  protected_resources: string[];
}

/** The group of one row of an editable list ("Scope 1"). */
/** What the page's clipboard holds (run in the page). */
const readClipboard = (): Promise<string> =>
  (
    globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
  ).navigator.clipboard.readText();

const row = (page: Page, name: string) => page.getByRole('group', { name, exact: true });

/**
 * The admin console's Services pages in a real Chromium against a real broker: the empty list, registering with
 * every field problem shown at its field in words, the redirect URI from the API's answer with its copy button,
 * editing (the write-only secret kept, then removed for a public client), a protected resource another service owns
 * and a delete a permission set blocks, each 409 explained; a viewer sees it all with every write disabled.
 */
describe('admin console: services', () => {
  let fx: AdminConsoleFixture;
  let serviceId: string;

  beforeAll(async () => {
    fx = await startAdminConsoleFixture({
      config: { server: { admin: { authorization: { viewers: ['auditor@example.com'] } } } },
    });
  });

  afterAll(async () => {
    await fx?.stop();
  });

  const services = async () => (await fx.admin.get('/api/services')).json<ServiceAnswer[]>();

  it('says there is none yet, and how to add the first', async () => {
    const recorded = await fx.open('/services');
    await recorded.page.getByRole('heading', { name: 'No services yet' }).waitFor();
    await recorded.page.getByRole('link', { name: 'Register a service' }).waitFor();
    await reviewAdminPage(recorded, 'services-empty');
  });

  it('shows each problem of a refused registration at its field, in words, then registers it', async () => {
    const recorded: RecordedPage = await fx.open('/services/new');
    const { page } = recorded;
    await page.getByRole('heading', { level: 1, name: 'Register a service' }).waitFor();
    await page.getByRole('button', { name: 'Register service' }).click();
    await page.getByText('Name is required.').waitFor();
    const name = page.getByLabel('Name', { exact: true });
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    // The message is the field's description, so a screen reader reads it with the field.
    const describedBy = (await name.getAttribute('aria-describedby')) ?? '';
    const described = await Promise.all(describedBy.split(' ').map((id) => page.locator(`[id="${id}"]`).textContent()));
    expect(described).toContain('Name is required.');
    await page.getByText(/^Issuer URL must be a complete http:\/\/ or https:\/\/ address/).waitFor();
    await page.getByText('Client ID is required.').waitFor();
    expect(await page.locator('main').textContent()).not.toMatch(/display_name|\{"/);
    await reviewAdminPage(recorded, 'service-new-errors');

    await name.fill('Team Calendar');
    await page.getByLabel('Description (optional)', { exact: true }).fill('Calendars and events of the team');
    await page.getByLabel('Issuer URL', { exact: true }).fill(IDP);
    await page.getByLabel('Authorization endpoint (optional)', { exact: true }).fill(`${IDP}/oauth2/authorize`);
    await page.getByLabel('Token endpoint (optional)', { exact: true }).fill(`${IDP}/oauth2/token`);
    await page.getByLabel('Client ID', { exact: true }).fill('broker-team-calendar');
    // HTTP Basic is the default method: without a secret, the API's rule is said at the secret.
    await page.getByRole('button', { name: 'Add a scope' }).click();
    await row(page, 'Scope 1').getByLabel('Scope', { exact: true }).fill('calendar read');
    await row(page, 'Scope 1')
      .getByLabel('What it lets an agent do (optional)', { exact: true })
      .fill('See your calendars');
    await page.getByRole('button', { name: 'Add a scope' }).click();
    await row(page, 'Scope 2').getByLabel('Scope', { exact: true }).fill('calendar.write');
    await row(page, 'Scope 2')
      .getByLabel('What it lets an agent do (optional)', { exact: true })
      .fill('Add and change your events');
    await page.getByRole('button', { name: 'Add a resource URI' }).click();
    await page.getByLabel('Resource URI 1', { exact: true }).fill('https://calendar.example.com/api');
    await page.getByRole('button', { name: 'Register service' }).click();
    await row(page, 'Scope 1')
      .getByText('Scope must be one word of printable characters, without spaces (for example calendar.read).')
      .waitFor();
    expect(await row(page, 'Scope 1').getByLabel('Scope', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await row(page, 'Scope 2').getByLabel('Scope', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    await row(page, 'Scope 1').getByLabel('Scope', { exact: true }).fill('calendar.read');
    await page.getByRole('button', { name: 'Register service' }).click();
    await page.getByText(/^A client secret is required with this sign-in method/).waitFor();
    expect(await page.getByLabel('Client secret', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Client secret', { exact: true }).fill('s3cret-from-the-provider');
    await page.getByRole('button', { name: 'Register service' }).click();

    await page.getByRole('heading', { level: 1, name: 'Team Calendar' }).waitFor();
    const [stored] = await services();
    serviceId = stored?.id as string;
    expect(page.url()).toBe(`${fx.adminUrl}/services/${serviceId}`);
    expect(stored).toMatchObject({
      display_name: 'Team Calendar',
      client_secret: 'REDACTED',
      token_endpoint_auth_method: 'client_secret_basic',
      scopes: [
        { scope: 'calendar.read', description: 'See your calendars' },
        { scope: 'calendar.write', description: 'Add and change your events' },
      ],
      protected_resources: ['https://calendar.example.com/api'],
    });
    // The redirect URI is the API's answer, shown prominently with the sentence and a copy button.
    await page.getByText('Register this redirect URI at the provider').waitFor();
    expect(stored?.callback_url).toBe(`${fx.enduserUrl}/api/third-party/${serviceId}/oauth2/callback`);
    expect((await page.locator('#callback-url').textContent())?.trim()).toBe(stored?.callback_url);
    await recorded.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: fx.adminUrl });
    await page.getByRole('button', { name: 'Copy redirect URI' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate(readClipboard)).toBe(stored?.callback_url);
    // Nothing of the secret comes back to the page.
    expect(await page.getByLabel('Client secret', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain('s3cret-from-the-provider');
    await reviewAdminPage(recorded, 'service-registered');
  });

  it('keeps the write-only secret when its field is left empty, and removes it for a public client', async () => {
    const recorded = await fx.open(`/services/${serviceId}`);
    const { page } = recorded;
    await page.getByText('Stored — leave empty to keep.', { exact: false }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Team Calendar (EU)');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText(/^Saved\./).waitFor();
    let [stored] = await services();
    expect(stored).toMatchObject({ display_name: 'Team Calendar (EU)', client_secret: 'REDACTED' });

    await page.getByRole('radio', { name: /No secret \(public client\)/ }).check();
    expect(await page.getByLabel('Client secret', { exact: true }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText(/^Saved\./).waitFor();
    [stored] = await services();
    expect(stored).toMatchObject({ client_secret: null, token_endpoint_auth_method: 'none' });
    await reviewAdminPage(recorded, 'service-edited');
  });

  it("explains a protected resource that is another service's, naming that service", async () => {
    const recorded = await fx.open('/services/new');
    const { page } = recorded;
    await page.getByLabel('Name', { exact: true }).fill('Shared Calendar');
    await page.getByLabel('Issuer URL', { exact: true }).fill(IDP);
    await page.getByLabel('Authorization endpoint (optional)', { exact: true }).fill(`${IDP}/oauth2/authorize`);
    await page.getByLabel('Token endpoint (optional)', { exact: true }).fill(`${IDP}/oauth2/token`);
    await page.getByLabel('Client ID', { exact: true }).fill('shared');
    await page.getByRole('radio', { name: /No secret \(public client\)/ }).check();
    await page.getByRole('button', { name: 'Add a resource URI' }).click();
    await page.getByLabel('Resource URI 1', { exact: true }).fill('https://Calendar.example.com/api/');
    await page.getByRole('button', { name: 'Register service' }).click();
    const notice = page.getByRole('alert').filter({ hasText: 'The service was not registered.' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain(
      'A protected resource URI already belongs to the service “Team Calendar (EU)”, and a URI belongs to one service only.',
    );
    expect((await services()).length).toBe(1);
    await reviewAdminPage(recorded, 'service-conflict');
  });

  it("refuses discovery from an issuer that publishes nothing, in words at the issuer's field", async () => {
    const { page } = await fx.open('/services/new');
    await page.getByLabel('Name', { exact: true }).fill('Nowhere');
    await page.getByLabel('Issuer URL', { exact: true }).fill('https://issuer.invalid');
    await page.getByLabel('Client ID', { exact: true }).fill('c');
    await page.getByRole('radio', { name: /No secret \(public client\)/ }).check();
    await page.getByRole('button', { name: 'Register service' }).click();
    await page.getByText(/^The broker could not read the provider's endpoints from this issuer/).waitFor();
    expect(await page.getByLabel('Issuer URL', { exact: true }).getAttribute('aria-invalid')).toBe('true');
  });

  it('explains a delete a permission set blocks, naming the set; deletes once the set is gone', async () => {
    const set = await fx.admin.post('/api/permission-sets', {
      name: 'Calendar readers',
      service_scopes: [{ service_id: serviceId, scopes: ['calendar.read'] }],
    });
    expect(set.status, set.text).toBe(201);
    const recorded = await fx.open(`/services/${serviceId}`);
    const { page } = recorded;
    await page.getByRole('button', { name: 'Delete Team Calendar (EU)…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Team Calendar (EU)?' });
    await dialog.getByText(/every person's connection to it is deleted/).waitFor();
    await reviewAdminPage(recorded, 'service-delete-confirm');
    await dialog.getByRole('button', { name: 'Delete Team Calendar (EU)' }).click();
    const notice = page.getByRole('alert').filter({ hasText: 'cannot be deleted' });
    await notice.waitFor();
    expect(await notice.textContent()).toBe(
      'Team Calendar (EU) cannot be deleted. The permission set “Calendar readers” names it. Remove Team Calendar (EU) from that set (or delete the set) first.',
    );
    await reviewAdminPage(recorded, 'service-delete-conflict');

    expect((await fx.admin.delete(`/api/permission-sets/${set.json<{ id: string }>().id}`)).status).toBe(204);
    await page.getByRole('button', { name: 'Delete Team Calendar (EU)…' }).click();
    await dialog.getByRole('button', { name: 'Delete Team Calendar (EU)' }).click();
    await page.waitForURL(`${fx.adminUrl}/services`);
    await page.getByRole('status').filter({ hasText: 'Team Calendar (EU) is deleted.' }).waitFor();
    expect(await services()).toEqual([]);
    expect(recorded.pageErrors).toEqual([]);
  });

  it('shows a viewer every service with each write disabled and why', async () => {
    const created = await fx.admin.post('/api/services', {
      display_name: 'Mail',
      client_id: 'broker-mail',
      client_secret: 'mail-secret',
      issuer_uri: 'https://mail.example.com',
      authorization_endpoint: 'https://mail.example.com/authorize',
      token_endpoint: 'https://mail.example.com/token',
      scopes: [{ scope: 'mail.read', description: 'Read your mail' }],
    });
    expect(created.status, created.text).toBe(201);
    const list = await fx.open('/services', { principal: 'auditor@example.com' });
    await list.page.getByRole('link', { name: 'Mail' }).waitFor();
    await list.page.getByText('Read-only: your role is viewer.').waitFor();
    expect(await list.page.getByRole('button', { name: 'Register a service' }).isDisabled()).toBe(true);
    await reviewAdminPage(list, 'services-viewer');

    const recorded = await fx.open(`/services/${created.json<{ id: string }>().id}`, {
      principal: 'auditor@example.com',
    });
    const { page } = recorded;
    await page.getByText('Register this redirect URI at the provider').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save changes' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Delete Mail…' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Copy redirect URI' }).isEnabled()).toBe(true);
    await reviewAdminPage(recorded, 'service-viewer');
  });
});
