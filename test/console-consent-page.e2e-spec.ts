import { http } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, reviewPage, startConsoleFixture, type ConsoleFixture } from './support/console-fixture';

const REDIRECT = 'https://agent.example.com/cb';
const DAY = 86_400_000;

interface GrantList {
  data: { valid_until: string | null; granted_permission_sets: Record<string, string[]> }[];
}

/**
 * The consent page without an authorization request (issue 15 item 3): the current grant
 * pre-selected, the expiry choices, Allow showing a confirmation, Cancel instead of Deny;
 * with a request, Connect returns here with the request.
 */
describe('console: the consent page edits an existing grant', () => {
  let fx: ConsoleFixture;
  let mail: string;
  let calendar: string;
  let mailSet: string;
  let calendarSet: string;
  let agentId: string;

  const grants = async () => (await http(`${fx.base}/api/consent/agents/${agentId}/grants`, { headers: { 'x-remote-user': ALICE } })).json<GrantList>().data;

  beforeAll(async () => {
    fx = await startConsoleFixture();
    const idp = 'https://idp.example.com';
    const service = async (name: string, scope: string, description: string, resource: string) =>
      (await fx.admin.post('/api/services', { display_name: name, client_id: name, issuer_uri: idp, authorization_endpoint: `${idp}/a`, token_endpoint: `${idp}/t`, scopes: [{ scope, description }], protected_resources: [resource] })).json<{ id: string }>().id;
    mail = await service('Mail', 'mail.read', 'Read your mail', 'https://mail.example.com');
    calendar = await service('Calendar', 'calendar.read', 'See your calendar', 'https://calendar.example.com');
    mailSet = (await fx.admin.post('/api/permission-sets', { name: 'Read mail', description: 'Reads your inbox', service_scopes: [{ service_id: mail, scopes: ['mail.read'] }] })).json<{ id: string }>().id;
    calendarSet = (await fx.admin.post('/api/permission-sets', { name: 'Calendar', description: 'Looks at your calendar', service_scopes: [{ service_id: calendar, scopes: ['calendar.read'] }] })).json<{ id: string }>().id;
    const created = await fx.admin.post('/api/agents', { display_name: 'Planner', description: 'Plans your week.', redirect_uris: [REDIRECT], permission_sets: [{ permission_set_id: mailSet }, { permission_set_id: calendarSet, requirement_type: 'optional' }] });
    expect(created.status, created.text).toBe(201);
    agentId = created.json<{ id: string }>().id;
    const validUntil = new Date(fx.clock.now().getTime() + 10 * DAY).toISOString();
    const granted = await http(`${fx.base}/api/consent/agents/${agentId}/grants`, { method: 'POST', headers: { 'x-remote-user': ALICE, 'content-type': 'application/json', origin: fx.base }, body: JSON.stringify({ granted_permission_sets: { [mailSet]: [mail], [calendarSet]: [calendar] }, valid_until: validUntil }) });
    expect(granted.status, granted.text).toBe(201);
  });

  afterAll(async () => {
    await fx?.stop();
  });

  it('pre-selects the current grant, offers Cancel instead of Deny, and Allow with no expiry shows the confirmation', async () => {
    const page = await fx.open(`/agents/${agentId}`);
    const p = page.page;
    await p.getByRole('heading', { level: 1, name: 'Planner' }).waitFor();
    // The mandatory set is fixed on; the optional one is ticked because the grant holds it; the expiry is the grant's date.
    expect(await p.getByRole('checkbox', { name: 'Read mail' }).isChecked()).toBe(true);
    expect(await p.getByRole('checkbox', { name: 'Read mail' }).isDisabled()).toBe(true);
    expect(await p.getByRole('checkbox', { name: 'Calendar' }).isChecked()).toBe(true);
    expect(await p.getByRole('radio', { name: 'Until a date' }).isChecked()).toBe(true);
    expect(await p.getByRole('button', { name: /^deny/i }).count()).toBe(0);
    await p.getByRole('link', { name: 'Cancel' }).waitFor();
    await reviewPage(page, 'consent-edit');

    await p.getByRole('checkbox', { name: 'Calendar' }).uncheck();
    await p.getByRole('radio', { name: 'No expiry' }).check();
    await p.getByRole('button', { name: /^allow/i }).click();
    await p.getByRole('status').filter({ hasText: /Planner may now act for you/ }).waitFor();
    const [grant] = await grants();
    expect(grant?.valid_until).toBeNull();
    expect(grant?.granted_permission_sets).toEqual({ [mailSet]: [mail] });
    await reviewPage(page, 'consent-saved');
    expect(page.pageErrors).toEqual([]);
    expect(page.unexpectedErrors()).toEqual([]);
  });

  it('refuses a past date before sending anything', async () => {
    const before = await grants();
    const page = await fx.open(`/agents/${agentId}`);
    const p = page.page;
    await p.getByRole('radio', { name: 'Until a date' }).check();
    await p.getByLabel('Expiry date').fill('2001-01-01');
    await p.getByRole('button', { name: /^allow/i }).click();
    await p.getByRole('alert').filter({ hasText: /future/ }).waitFor();
    expect(await grants()).toEqual(before);
  });

  it('with a request: Connect goes to the third-party authorize route with this page and its session_token as redirect_uri', async () => {
    const authorize = new URL(`${fx.base}/oauth2/authorize`);
    for (const [k, v] of Object.entries({ client_id: agentId, response_type: 'code', redirect_uri: REDIRECT, scope: 'mail.read', state: 's1', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })) authorize.searchParams.set(k, v);
    // The grant exists: revoke it so the request goes to the consent page.
    await http(`${fx.base}/api/consent/agents/${agentId}/grants`, { method: 'DELETE', headers: { 'x-remote-user': ALICE, origin: fx.base } });
    const location = new URL((await http(authorize.toString(), { headers: { 'x-remote-user': ALICE } })).headers.location as string);
    const token = location.searchParams.get('session_token');
    expect(token).toBeTruthy();
    const page = await fx.open(`${location.pathname}${location.search}`);
    const p = page.page;
    await p.getByRole('button', { name: /^deny/i }).waitFor();
    await expect.poll(() => new URL(p.url()).search).toBe('');
    const href = await p.getByRole('link', { name: 'Connect Mail' }).getAttribute('href');
    const connect = new URL(href as string, fx.base);
    expect(connect.pathname).toBe(`/api/third-party/${mail}/oauth2/authorize`);
    const back = new URL(connect.searchParams.get('redirect_uri') as string);
    expect(back.pathname).toBe(`/agents/${agentId}`);
    expect(back.searchParams.get('session_token')).toBe(token);
    // Nothing of the request is kept in storage.
    expect(await p.evaluate(() => {
      const { localStorage, sessionStorage } = globalThis as unknown as { localStorage: { length: number }; sessionStorage: { length: number } };
      return [localStorage.length, sessionStorage.length];
    })).toEqual([0, 0]);

    // Coming back from the provider: the connected service is confirmed, the request still pending.
    const returned = await fx.open(`/agents/${agentId}?session_token=${encodeURIComponent(token as string)}&success=true&service_id=${mail}`);
    await returned.page.getByRole('button', { name: /^deny/i }).waitFor();
    await expect.poll(() => new URL(returned.page.url()).search).toBe('');
  });
});
