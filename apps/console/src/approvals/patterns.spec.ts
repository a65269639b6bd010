import { describe, expect, it } from 'vitest';
import {
  choicesFor,
  coverageWords,
  globMeaning,
  initialRows,
  patternErrorWords,
  toPattern,
  type PatternRow,
} from './patterns';

describe('argument patterns offered as choices', () => {
  it("a path: exactly it, any file in its folder, anything under it, any value, or a pattern of one's own", () => {
    const choices = choicesFor('path', '/reports/2026/q3.pdf');
    expect(choices.map((c) => [c.id, c.label, c.glob])).toEqual([
      ['exact', 'Exactly “/reports/2026/q3.pdf”', '/reports/2026/q3.pdf'],
      ['in-folder', 'Any file in /reports/2026', '/reports/2026/*'],
      ['under-folder', 'Anything in /reports/2026 or its subfolders', '/reports/2026/**'],
      ['any', 'Any path', null],
      ['custom', 'My own pattern (advanced)', null],
    ]);
    // Glob characters in the folder are escaped: the folder is matched as written.
    expect(choicesFor('path', '/a*b/c.txt').find((c) => c.id === 'in-folder')?.glob).toBe('/a\\*b/*');
  });

  it('an address: any address at its domain; a query: any query; a structured value: exactly it or anything', () => {
    expect(choicesFor('to', 'bob@example.com').find((c) => c.id === 'domain')).toEqual({
      id: 'domain',
      label: 'Any address at example.com',
      glob: '*@example.com',
    });
    expect(choicesFor('query', 'select 1').map((c) => c.label)).toEqual([
      'Exactly “select 1”',
      'Any query',
      'My own pattern (advanced)',
    ]);
    expect(choicesFor('filters', { folders: ['a'], b: 1 }).map((c) => [c.label, c.glob])).toEqual([
      ['Exactly this value', '{"b":1,"folders":["a"]}'],
      ['Any filters', null],
    ]);
  });

  it('every argument kept exactly: no pattern (the whole call is compared); else only the constrained arguments are named', () => {
    const rows = initialRows({ path: '/reports/q3.pdf', lines: 10, note: 'x' });
    expect(toPattern(rows)).toBeNull();
    const widened: PatternRow[] = rows.map((row) =>
      row.name === 'path' ? { ...row, choice: 'in-folder' } : row.name === 'note' ? { ...row, choice: 'any' } : row,
    );
    expect(toPattern(widened)).toEqual({ path: '/reports/*', lines: '10' });
    expect(
      toPattern(rows.map((row) => (row.name === 'note' ? { ...row, choice: 'custom', custom: 'x?' } : row))),
    ).toEqual({ path: '/reports/q3.pdf', lines: '10', note: 'x?' });
  });
});

describe('stored patterns in words', () => {
  it('a structured value is shown as the value, never as escaped JSON', () => {
    expect(globMeaning('{"folders":["a","b"]}', { folders: ['a', 'b'] })).toEqual({
      kind: 'exactly',
      value: { folders: ['a', 'b'] },
    });
    // Without the reviewed value at hand (it is not a string), the JSON text is still read as the value.
    expect(globMeaning('{"folders":["a"]}', undefined)).toEqual({ kind: 'exactly', value: { folders: ['a'] } });
  });

  it('folders, domains and prefixes in words; an exact text unescaped; anything else as the pattern', () => {
    expect(globMeaning('/reports/*', '/reports/q3.pdf')).toEqual({ kind: 'words', text: 'any file in /reports' });
    expect(globMeaning('/reports/**', '/reports/q3.pdf')).toEqual({
      kind: 'words',
      text: 'anything in /reports or its subfolders',
    });
    expect(globMeaning('*@example.com', 'bob@example.com')).toEqual({
      kind: 'words',
      text: 'any address at example.com',
    });
    expect(globMeaning('Report \\*final\\*', 'Report *final*')).toEqual({ kind: 'exactly', value: 'Report *final*' });
    expect(globMeaning('Weekly*', 'Weekly report')).toEqual({
      kind: 'words',
      text: 'anything starting with “Weekly” (without a further “/”)',
    });
    expect(globMeaning('/a/[bc]?/*.md', '/a/b1/x.md')).toEqual({ kind: 'glob', glob: '/a/[bc]?/*.md' });
  });
});

describe('a refused pattern in words', () => {
  it('names the argument and says what is wrong, never `params_pattern.role: …`', () => {
    const words = patternErrorWords(
      'params_pattern.role: does not match the reviewed value of this argument; params_pattern.other: names an argument the reviewed call does not have',
    );
    expect(words).toEqual([
      'The choice for “role” leaves out the value you reviewed: it must include it, or this very call would not be allowed.',
      '“other” is not an argument of this call.',
    ]);
    expect(words.join(' ')).not.toContain('params_pattern');
  });

  it('keeps a message of another shape as it is', () => {
    expect(patternErrorWords('once takes no params_pattern')).toEqual(['once takes no params_pattern']);
  });
});

describe('what an approval covers, said before deciding', () => {
  it('kept exactly: every argument pinned to its reviewed value, and nothing else allowed', () => {
    const rows = initialRows({ path: '/reports/q3.pdf', lines: 10 });
    expect(coverageWords(rows)).toEqual([
      'Only calls whose path is exactly “/reports/q3.pdf” and whose lines is exactly 10.',
      'A call with any other value, or with an argument this call does not have, asks you again.',
    ]);
    expect(coverageWords([])).toEqual(['Only calls without arguments.']);
  });

  it('widened: the pinned arguments with their values, the free ones by name, and every other argument any value', () => {
    const rows: PatternRow[] = initialRows({ path: '/reports/q3.pdf', share_with: ['bob@example.com'], note: 'x' }).map(
      (row) =>
        row.name === 'path' ? { ...row, choice: 'in-folder' } : row.name === 'note' ? { ...row, choice: 'any' } : row,
    );
    expect(coverageWords(rows)).toEqual([
      'Calls whose path is any file in /reports and whose share_with is exactly ["bob@example.com"].',
      'note may be anything.',
      'Every other argument may be anything too, including arguments this call does not have.',
    ]);
    const all = rows.map((row) => ({ ...row, choice: 'any' as const }));
    expect(coverageWords(all)[0]).toBe('Any arguments: no argument is limited.');
    const custom = rows.map((row) =>
      row.name === 'path' ? { ...row, choice: 'custom' as const, custom: '/r?/[ab]' } : row,
    );
    expect(coverageWords(custom)[0]).toContain('whose path matches the pattern /r?/[ab]');
  });
});
