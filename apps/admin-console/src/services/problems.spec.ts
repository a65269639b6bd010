import { describe, expect, it } from 'vitest';
import { formProblems, problemInWords, unplaced } from './problems';

describe('the admin API field problems in words', () => {
  it('says a required field is required, by its label', () => {
    expect(problemInWords('display_name must be longer than or equal to 1 characters', 'Name')).toBe(
      'Name is required.',
    );
  });

  it('names the longest length allowed', () => {
    expect(problemInWords('client_id must be shorter than or equal to 255 characters', 'Client ID')).toBe(
      'Client ID is too long: at most 255 characters.',
    );
  });

  it('explains a URL that is not absolute http(s)', () => {
    expect(problemInWords('issuer_uri must be an absolute http(s) URL', 'Issuer URL')).toMatch(
      /^Issuer URL must be a complete http:\/\/ or https:\/\/ address/,
    );
  });

  it('puts the label in place of a nested property name it does not know', () => {
    expect(
      problemInWords("scope must not be offline_access or openid (the authorization server's own scopes)", 'Scope'),
    ).toBe("Scope must not be offline_access or openid (the authorization server's own scopes).");
    expect(problemInWords('each value in protected_resources must be a URI', 'Protected resource URI')).toBe(
      'Protected resource URI must be a URI.',
    );
  });

  it("keeps the first problem of a field and prefers the form's own sentence", () => {
    const words = formProblems(
      [
        { field: 'client_secret', problem: 'required' },
        { field: 'display_name', problem: 'display_name must be longer than or equal to 1 characters' },
        { field: 'display_name', problem: 'display_name must be a string' },
      ],
      (field) => (field === 'display_name' ? 'Name' : field),
      (field) => (field === 'client_secret' ? 'A secret is needed.' : undefined),
    );
    expect(words).toEqual({ client_secret: 'A secret is needed.', display_name: 'Name is required.' });
    expect(unplaced(words, (field) => field === 'display_name')).toEqual(['A secret is needed.']);
  });
});
