import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

type Json = Record<string, unknown>;

const document = JSON.parse(readFileSync(resolve('openapi/admin-api.json'), 'utf8')) as {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json> };
};

/** Words a generator or a hurried author puts where a value belongs. */
const PLACEHOLDERS =
  /^(string|text|value|example|test|foo|bar|baz|qux|abc|xyz|xxx+|asdf|lorem( ipsum)?|todo|null|undefined|changeme)$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Why an example string looks random or made up, or undefined when it reads as a real value: a
 * placeholder word, a run of one repeated character, or a long token of mixed letters and digits
 * with no word in it (what a generator produces). A UUID only where the property is one.
 */
export function randomLooking(value: string, format: unknown): string | undefined {
  if (PLACEHOLDERS.test(value.trim())) return 'a placeholder word';
  if (/^(.)\1{3,}$/.test(value)) return 'one character repeated';
  if (UUID.test(value)) return format === 'uuid' ? undefined : 'a UUID where no id belongs';
  for (const token of value.split(/[^A-Za-z0-9]+/)) {
    if (token.length < 12) continue;
    const digits = (token.match(/[0-9]/g) ?? []).length;
    const vowels = (token.match(/[aeiou]/gi) ?? []).length;
    if (digits >= 3 && digits < token.length && vowels / token.length < 0.25) return `the token ${token}`;
  }
  return undefined;
}

interface Finding {
  readonly where: string;
  readonly problem: string;
}

/** Every property reachable from a schema (through `$ref`, `allOf`/`oneOf`/`anyOf` and array items), once per schema. */
function propertiesOf(schema: Json, where: string, seen: Set<string>, out: Finding[]): void {
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const name = ref.split('/').pop() as string;
    if (seen.has(name)) return;
    seen.add(name);
    propertiesOf(document.components.schemas[name] as Json, name, seen, out);
    return;
  }
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const)
    for (const part of (schema[key] as Json[] | undefined) ?? []) propertiesOf(part, where, seen, out);
  if (schema.items !== undefined) propertiesOf(schema.items as Json, where, seen, out);
  for (const [name, property] of Object.entries((schema.properties as Record<string, Json> | undefined) ?? {})) {
    const at = `${where}.${name}`;
    const target =
      property.$ref === undefined
        ? property
        : (document.components.schemas[(property.$ref as string).split('/').pop() as string] as Json);
    // An object property's example is its own properties' examples.
    if (target.properties === undefined) checkExample(property, at, out);
    propertiesOf(property, at, seen, out);
  }
}

function checkExample(property: Json, where: string, out: Finding[]): void {
  if (!('example' in property)) {
    out.push({ where, problem: 'no example' });
    return;
  }
  const format = property.format ?? (property.items as Json | undefined)?.format;
  const values = Array.isArray(property.example) ? (property.example as unknown[]) : [property.example];
  // A list of objects: each object property's own example is checked where it is declared.
  for (const text of values) {
    if (typeof text !== 'string') continue;
    const problem = randomLooking(text, format);
    if (problem !== undefined) out.push({ where, problem: `example ${JSON.stringify(text)}: ${problem}` });
  }
}

/** The request bodies' schemas of every admin operation, by operation. */
function requestBodies(): [string, Json][] {
  const bodies: [string, Json][] = [];
  for (const [path, item] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(item)) {
      const content = (operation.requestBody as { content?: Record<string, { schema: Json }> } | undefined)?.content;
      for (const media of Object.values(content ?? {})) bodies.push([`${method.toUpperCase()} ${path}`, media.schema]);
    }
  return bodies;
}

describe('admin OpenAPI examples (Swagger UI "Try it out")', () => {
  it('recognises made-up values and accepts real ones', () => {
    for (const made of ['string', 'foo', 'xxxx', 'aZ3kP9qL2mX8vB', 'https://a8f3k2p9q1z7x.example.com'])
      expect(randomLooking(made, undefined), made).toBeDefined();
    expect(randomLooking('3f0c8b9e-5d41-4c1a-9b7e-2a6f1d8c4e55', undefined)).toBe('a UUID where no id belongs');
    for (const real of [
      'Expense assistant',
      'https://calendar.example.com/oauth2/token',
      'calendar.read',
      'expense-assistant-prod',
      'REPLACE_WITH_THE_PROVIDER_CLIENT_SECRET',
      'https://expenses.example.com/oauth2/callback',
    ])
      expect(randomLooking(real, undefined), real).toBeUndefined();
    expect(randomLooking('3f0c8b9e-5d41-4c1a-9b7e-2a6f1d8c4e55', 'uuid')).toBeUndefined();
  });

  it('walks the request bodies of the document', () => {
    // A document read as empty would make the next test vacuous.
    const names = requestBodies().map(([operation]) => operation);
    expect(names).toContain('POST /api/agents');
    expect(names).toContain('POST /api/services');
    expect(names.length).toBeGreaterThan(10);
  });

  it('gives every property of every request body a realistic example', () => {
    const findings: Finding[] = [];
    const seen = new Set<string>();
    for (const [operation, schema] of requestBodies()) propertiesOf(schema, operation, seen, findings);
    expect(findings).toEqual([]);
  });
});
