import { http, type RecordedPage } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewAdminPage, startAdminConsoleFixture, type AdminConsoleFixture } from '../support/admin-console-fixture';

/** The Signing keys page: list, rotate (add then make current), retire, and the API's 409s in words. */

interface Key {
  kid: string;
  is_current: boolean;
  deleted_at: string | null;
}

describe('the admin console: signing keys', () => {
  let fixture: AdminConsoleFixture;
  let recorded: RecordedPage;
  let firstKid: string;

  const keys = async (): Promise<Key[]> =>
    (await fixture.admin.get('/api/oauth2-server/signing-keys')).json<{ items: Key[] }>().items;
  const published = async (): Promise<string[]> =>
    (await http(`${fixture.enduserUrl}/oauth2/jwks.json`))
      .json<{ keys: { kid: string }[] }>()
      .keys.map((key) => key.kid);

  beforeAll(async () => {
    fixture = await startAdminConsoleFixture();
    const [first] = await keys();
    if (first === undefined) throw new Error('the broker started without a signing key');
    firstKid = first.kid;
  });

  afterAll(async () => {
    await recorded?.close();
    await fixture.stop();
  });

  it('lists the key the broker started with as current, and explains what each step means for tokens', async () => {
    recorded = await fixture.open('/signing-keys');
    const { page } = recorded;
    await page.getByRole('heading', { level: 1, name: 'Signing keys' }).waitFor();
    const row = page.getByRole('row', { name: new RegExp(firstKid) });
    await expect(row.textContent()).resolves.toContain('Current: signs new tokens');
    await page.getByText('What each step means for tokens in flight').click();
    const explainer = await page.locator('details.explainer').textContent();
    expect(explainer).toContain('keep verifying until they expire');
    expect(explainer).toContain('every token it signed stops verifying');
    await reviewAdminPage(recorded, 'keys-list');
  });

  it('explains why the only key cannot be retired (409), and nothing changes', async () => {
    const { page } = recorded;
    await page.getByRole('button', { name: `Retire ${firstKid}` }).click();
    const dialog = page.getByRole('dialog', { name: `Retire ${firstKid}?` });
    await expect(dialog.textContent()).resolves.toContain('Every token it signed stops verifying');
    await dialog.getByRole('button', { name: 'Retire key' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'cannot be retired' });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/only published key|current key/);
    expect(await alert.textContent()).not.toContain('{');
    expect((await keys()).filter((key) => key.deleted_at === null).map((key) => key.kid)).toEqual([firstKid]);
    await reviewAdminPage(recorded, 'keys-conflict');
  });

  it('rotates: a new key is added and made current, the old one stays published', async () => {
    const { page } = recorded;
    await page.getByRole('button', { name: 'Rotate now' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the signing key?' });
    expect(await dialog.textContent()).toContain(`Tokens signed with ${firstKid} keep verifying until they expire`);
    await reviewAdminPage(recorded, 'keys-rotate-dialog');
    await dialog.getByRole('button', { name: 'Rotate', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Rotated' }).waitFor();
    const live = (await keys()).filter((key) => key.deleted_at === null);
    expect(live).toHaveLength(2);
    const current = live.find((key) => key.is_current);
    expect(current?.kid).not.toBe(firstKid);
    await expect(page.getByRole('row', { name: new RegExp(current?.kid ?? '') }).textContent()).resolves.toContain(
      'Current',
    );
    expect(await published()).toEqual(expect.arrayContaining([firstKid, current?.kid]));
  });

  it('refuses to retire the current key with the reason in words (409 current_key)', async () => {
    const { page } = recorded;
    const current = (await keys()).find((key) => key.is_current && key.deleted_at === null) as Key;
    await page.getByRole('button', { name: `Retire ${current.kid}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Retire key' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'it is the current key' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Make another key current first');
  });

  it('retires the old key: it leaves the published keys and the page says its tokens no longer verify', async () => {
    const { page } = recorded;
    await page.getByRole('button', { name: `Retire ${firstKid}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Retire key' }).click();
    await page.getByRole('status').filter({ hasText: 'no longer verify' }).waitFor();
    await expect(page.getByRole('row', { name: new RegExp(firstKid) }).textContent()).resolves.toContain('Retired');
    expect(await published()).not.toContain(firstKid);
    expect((await keys()).find((key) => key.kid === firstKid)?.deleted_at).not.toBeNull();
    await reviewAdminPage(recorded, 'keys-after-rotation');
    expect(recorded.pageErrors).toEqual([]);
    expect(recorded.unexpectedErrors()).toEqual([]);
  });
});
