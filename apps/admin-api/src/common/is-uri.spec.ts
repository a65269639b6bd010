import { fullFormats } from 'ajv-formats/dist/formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isUri } from './is-uri';

/** The `format: uri` check the contract tests apply to every answer (ajv-formats, full mode). */
function documentedUri(value: string): boolean {
  const format = fullFormats.uri;
  if (typeof format !== 'function') throw new Error('ajv-formats: uri is expected to be a function');
  return format(value) === true;
}

describe('isUri', () => {
  it.each([
    'https://agent.example.com/callback',
    'http://127.0.0.1:8123/cb',
    'http://[::1]/cb',
    'http://[::ffff:127.0.0.1]:9/x',
    'http://localhost:3000/cb',
    'com.example.app:/oauth2redirect',
    'HTTPS://Mail.Example.com/API/',
    'https://files.example.com//',
    'https://a.example.com/p%20q?x=1&y=a:b/c?d#frag',
    "https://a.example.com/(x)!$&'*+,;=@",
  ])('takes %s, and so does the documents’ format: uri', (value) => {
    expect(isUri(value)).toBe(true);
    expect(documentedUri(value)).toBe(true);
  });

  it.each([
    ['a space', 'https://a.example.com/a b'],
    ['a pipe', 'https://a.example.com/a|b'],
    ['braces', 'https://a.example.com/{x}'],
    ['non-ASCII', 'https://exämple.com/'],
    ['a malformed percent-encoding', 'https://a.example.com/%zz'],
    ['an empty path after the scheme', 'com.example.app:'],
    ['a malformed IP literal', 'https://[1:2]/'],
    ['markup', 'data:text/html,<script>alert(1)</script>'],
    ['a relative reference', '/cb'],
  ])('refuses %s', (_name, value) => {
    expect(isUri(value)).toBe(false);
  });

  it('never takes a string the documents’ format: uri refuses', () => {
    const characters = fc.constantFrom(...'aZ09-._~!$&\'()*+,;=:@/?#[]%|{}^` "<>\\é\u0000'.split(''));
    const candidates = fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc
        .tuple(
          fc.constantFrom('https://', 'http://[', 'com.example.app:', 'x:'),
          fc.string({ unit: characters, maxLength: 40 }),
        )
        .map(([prefix, rest]) => prefix + rest),
    );
    fc.assert(
      fc.property(candidates, (value) => !isUri(value) || documentedUri(value)),
      { numRuns: 5_000 },
    );
  });
});
