import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from './event-catalogue';

/**
 * The kinds the "Event kinds" table of docs/events.md documents, from its first column: `a.b`, and
 * `a.b` / `.c` for `a.b` and `a.c`.
 */
function documentedKinds(readme: string): string[] {
  const section = readme.slice(readme.indexOf('## Event kinds'), readme.indexOf('## Reading the ledger'));
  const kinds: string[] = [];
  for (const line of section.split('\n')) {
    const first = /^\| ([^|]+) \|/.exec(line)?.[1];
    if (first === undefined) continue;
    const named = [...first.matchAll(/`([a-z_.]+)`/g)].map((match) => match[1] as string);
    const head = named[0];
    if (head === undefined || !head.includes('.')) continue;
    const prefix = head.slice(0, head.indexOf('.'));
    for (const name of named) kinds.push(name.startsWith('.') ? `${prefix}${name}` : name);
  }
  return kinds;
}

describe('event kinds', () => {
  it('are each documented once in docs/events.md, which documents no other', () => {
    const readme = readFileSync(resolve(__dirname, '../../../../docs/events.md'), 'utf8');
    const documented = documentedKinds(readme);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...EVENT_TYPES].sort());
  });
});
