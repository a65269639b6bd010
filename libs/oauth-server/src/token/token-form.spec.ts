import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formPairs, readTokenForm } from './token-form';

const FORM = 'application/x-www-form-urlencoded';
const standard = (text: string): Array<[string, string]> => [...new URLSearchParams(text)];
/** What readTokenForm reads from `text`, as pairs (first values) and repeated names. */
const read = (text: string) => {
  const { form, repeated } = readTokenForm(FORM, Buffer.from(text, 'utf8'));
  return { form: [...form], repeated };
};
const expectedRead = (text: string) => {
  const form = new Map<string, string>();
  const repeated = new Set<string>();
  for (const [name, value] of standard(text)) {
    if (form.has(name)) repeated.add(name);
    else form.set(name, value);
  }
  return { form: [...form], repeated: [...repeated] };
};

const CASES = [
  '',
  '&',
  '&&a=1&&',
  '=',
  '=x',
  'a',
  'a=',
  'a==b',
  'a=b=c',
  '?a=1',
  '??a=1',
  'a=1&?b=2',
  'a+b=c+d',
  'a%2Bb=c%2bd',
  'a%20b=%e2%82%ac',
  '%=1',
  'a=%',
  'a=%2',
  'a=%zz',
  'a=%%32%30',
  'a=%ED%A0%80',
  'a=%C0%AF',
  'a=%F4%90%80%80',
  'a=%E2%82',
  'a=%FF&b=ok',
  'é=ü&€=%E2%82%AC',
  'a=1&a=2&b=3&a=4&b=5',
  'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&resource=https%3A%2F%2Fapi.example.com%2Fmcp%3Fx%3D1%26y%3D2',
];

describe('readTokenForm', () => {
  it('reads every body exactly as URLSearchParams does: malformed and repeated parameters, a leading ?, + and percent-encodings', () => {
    for (const text of CASES) expect(read(text), text).toEqual(expectedRead(text));
  });

  it('reads arbitrary bodies exactly as URLSearchParams does', () => {
    const piece = fc.oneof(
      fc.constantFrom(
        '&',
        '=',
        '+',
        '%',
        '?',
        '%2',
        '%2B',
        '%3D',
        '%26',
        '%E2%82%AC',
        '%ED%A0%80',
        '%C3',
        '%FF',
        'é',
        '\u0000',
      ),
      fc.string({ maxLength: 4 }),
      fc.string({ unit: 'binary', maxLength: 3 }),
      fc.stringMatching(/^%[0-9a-fA-F]{2}$/),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const text = pieces.join('');
        expect(read(text)).toEqual(expectedRead(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('reads a body of many pieces without =, the largest the endpoint accepts', () => {
    const text = 'a&'.repeat(128 * 1024);
    expect(read(text)).toEqual({ form: [['a', '']], repeated: ['a'] });
  });

  it('leaves a body whose percent-encodings are not well-formed UTF-8, or that starts with ?, to URLSearchParams', () => {
    expect(formPairs('a=%ED%A0%80')).toBeUndefined();
    expect(formPairs('a=%zz')).toBeUndefined();
    expect(formPairs('?a=1')).toBeUndefined();
    expect(formPairs('a=%E2%82%AC&b+c=1')).toEqual([
      ['a', '€'],
      ['b c', '1'],
    ]);
  });

  it('refuses another content type', () => {
    expect(() => readTokenForm('application/json', Buffer.from('{}'))).toThrow('application/x-www-form-urlencoded');
  });
});
