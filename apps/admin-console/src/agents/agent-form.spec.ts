import { describe, expect, it } from 'vitest';
import { bodyOf, EMPTY_AGENT, formFieldOf, problemInWords, problemsOf, valuesOf } from './agent-form';
import type { Agent } from './types';

const AGENT: Agent = {
  id: '6f1c2d0e-8a4b-4c5d-9e7f-0a1b2c3d4e5f',
  display_name: 'Expense assistant',
  description: null,
  canonical_id: 'expense-assistant',
  client_id: null,
  logo_url: 'https://assistant.example.com/logo.png',
  governance_url: null,
  user_documentation_url: null,
  agent_interface_url: null,
  redirect_uris: ['https://assistant.example.com/cb'],
  allowed_scopes: ['calendar.read'],
  allowed_resources: [],
  client_uris: [],
  dpop_bound_access_tokens: false,
  permission_sets: [{ permission_set_id: '0b8f5c52-4a4f-4b9e-9a43-0f4f0f0f0f0f', requirement_type: 'optional' }],
  created_at: '2026-11-29T10:00:00.000Z',
  updated_at: '2026-11-29T10:00:00.000Z',
  suspension: null,
};

describe('agent form values and body', () => {
  it('sends a registered agent back unchanged (PUT replaces everything)', () => {
    const body = bodyOf(valuesOf(AGENT));
    const { id, created_at, updated_at, suspension, ...fields } = AGENT;
    expect([id, created_at, updated_at, suspension]).toHaveLength(4);
    expect(body).toEqual(fields);
  });

  it('sends empty text as null and leaves empty list entries out', () => {
    const body = bodyOf({
      ...EMPTY_AGENT,
      display_name: ' Travel agent ',
      canonical_id: '   ',
      redirect_uris: ['', ' https://travel.example.com/cb ', ''],
    });
    expect(body).toMatchObject({
      display_name: 'Travel agent',
      canonical_id: null,
      description: null,
      logo_url: null,
      redirect_uris: ['https://travel.example.com/cb'],
      client_uris: [],
    });
  });

  it('turns the three DPoP choices into true, false and null', () => {
    expect(bodyOf({ ...EMPTY_AGENT, dpop: 'required' }).dpop_bound_access_tokens).toBe(true);
    expect(bodyOf({ ...EMPTY_AGENT, dpop: 'optional' }).dpop_bound_access_tokens).toBe(false);
    expect(bodyOf({ ...EMPTY_AGENT, dpop: 'default' }).dpop_bound_access_tokens).toBeNull();
    expect(valuesOf({ ...AGENT, dpop_bound_access_tokens: true }).dpop).toBe('required');
    expect(valuesOf({ ...AGENT, dpop_bound_access_tokens: null }).dpop).toBe('default');
  });
});

describe('API problems at their fields', () => {
  it('places a nested detail at its top-level field', () => {
    expect(formFieldOf('permission_sets.0.requirement_type')).toBe('permission_sets');
    expect(formFieldOf('redirect_uris')).toBe('redirect_uris');
    expect(formFieldOf('suspension')).toBeUndefined();
  });

  it("says a problem with the field's label and plain words", () => {
    expect(problemInWords('display_name', 'display_name must be longer than or equal to 1 characters')).toBe(
      'Name is required.',
    );
    expect(problemInWords('client_id', 'client_id must be shorter than or equal to 255 characters')).toBe(
      'Upstream client id must be at most 255 characters.',
    );
    expect(problemInWords('canonical_id', 'must not be shaped like a UUID')).toBe(
      'Canonical id: must not be shaped like a UUID.',
    );
  });

  it('puts each detail at its field and keeps the message when a detail has no field of the form', () => {
    const problems = problemsOf({
      status: 400,
      code: 'validation failed',
      message: 'redirect_uris: …; display_name: …',
      details: [
        { field: 'redirect_uris', problem: 'redirect_uris must be absolute https URIs (http only on loopback)' },
        { field: 'display_name', problem: 'display_name must be longer than or equal to 1 characters' },
      ],
    });
    expect(problems.fields).toEqual({
      redirect_uris: 'Redirect URIs must be absolute https URIs (http only on loopback).',
      display_name: 'Name is required.',
    });
    expect(problems.general).toBeUndefined();
    const unknown = problemsOf({
      status: 400,
      code: 'invalid request body',
      message: 'property suspension should not exist',
      details: [{ field: 'suspension', problem: 'property suspension should not exist' }],
    });
    expect(unknown.general).toBe('property suspension should not exist');
  });

  it('explains a taken canonical id (409) at the canonical id', () => {
    const problems = problemsOf({
      status: 409,
      code: 'conflict',
      message: 'canonical_id "expense-assistant" is already used by another agent',
      details: [],
    });
    expect(problems.fields.canonical_id).toContain('Another agent already has the canonical id “expense-assistant”');
    expect(problems.general).toBeUndefined();
  });
});
