import { describe, expect, it } from 'vitest';
import {
  emptyServiceForm,
  serviceBody,
  serviceFieldLabel,
  serviceForm,
  serviceProblemWords,
  type Service,
} from './service-form';

const STORED: Service = {
  id: '3f0c1a2b-4d5e-4f60-8a9b-0c1d2e3f4a5b',
  display_name: 'Calendar',
  description: null,
  logo_url: null,
  client_id: 'broker',
  client_secret: 'REDACTED',
  token_endpoint_auth_method: 'client_secret_basic',
  issuer_uri: 'https://accounts.example.com',
  authorization_endpoint: 'https://accounts.example.com/authorize',
  token_endpoint: 'https://accounts.example.com/token',
  scopes: [{ scope: 'calendar.read', description: 'See your calendars' }],
  protected_resources: ['https://calendar.example.com/api'],
  callback_url: 'https://broker.example.com/api/third-party/3f0c1a2b-4d5e-4f60-8a9b-0c1d2e3f4a5b/oauth2/callback',
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
};

describe('the service form', () => {
  it('leaves empty endpoints to discovery (null) and sends no secret when none is typed', () => {
    const body = serviceBody({
      ...emptyServiceForm(),
      display_name: ' Calendar ',
      issuer_uri: 'https://idp.example.com',
      client_id: 'c',
    });
    expect(body).toMatchObject({ display_name: 'Calendar', authorization_endpoint: null, token_endpoint: null });
    expect('client_secret' in body).toBe(false);
  });

  it('keeps the stored secret on an edit left empty, replaces it when one is typed', () => {
    expect('client_secret' in serviceBody(serviceForm(STORED), STORED)).toBe(false);
    expect(serviceBody({ ...serviceForm(STORED), client_secret: 'new' }, STORED).client_secret).toBe('new');
  });

  it('removes the stored secret of a service made public (none)', () => {
    const body = serviceBody(
      { ...serviceForm(STORED), token_endpoint_auth_method: 'none', client_secret: 'typed' },
      STORED,
    );
    expect(body.client_secret).toBeNull();
    expect(body.token_endpoint_auth_method).toBe('none');
  });

  it('sends back a stored service as it was (callback_url and the ids are read-only, left out)', () => {
    const body = serviceBody(serviceForm(STORED), STORED);
    expect(body).toEqual({
      display_name: 'Calendar',
      description: null,
      logo_url: null,
      client_id: 'broker',
      token_endpoint_auth_method: 'client_secret_basic',
      issuer_uri: 'https://accounts.example.com',
      authorization_endpoint: 'https://accounts.example.com/authorize',
      token_endpoint: 'https://accounts.example.com/token',
      scopes: [{ scope: 'calendar.read', description: 'See your calendars' }],
      protected_resources: ['https://calendar.example.com/api'],
    });
  });

  it('labels nested fields and says the secret rules in words', () => {
    expect(serviceFieldLabel('scopes.2.scope')).toBe('Scope');
    expect(serviceFieldLabel('protected_resources.0')).toBe('Protected resource URI');
    expect(serviceProblemWords('client_secret', 'required')).toMatch(/^A client secret is required/);
    expect(serviceProblemWords('issuer_uri', 'discovery of https://x failed')).toMatch(/could not read the provider/);
    expect(serviceProblemWords('display_name', 'anything')).toBeUndefined();
  });
});
