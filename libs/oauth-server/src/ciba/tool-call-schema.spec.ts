import { readFileSync } from 'node:fs';
import { OAuthError } from '@broker/domain';
import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalDetailJson, parseToolCallDetails, TOOL_CALL_TYPE } from './tool-call-details';

/**
 * docs/tool-call.schema.json (the published JSON Schema of the type) and the parser agree: every case of the table
 * is valid for both or invalid for both. The limits the schema cannot express (sizes, depth, the registry) are the
 * parser's alone and listed apart.
 */
const schema = JSON.parse(readFileSync('docs/tool-call.schema.json', 'utf8')) as object;
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(schema);
const MCP = 'https://mcp.example.com/mcp';
const anyRegistered = (): boolean => true;

const FULL = {
  type: TOOL_CALL_TYPE,
  locations: [MCP],
  actions: ['call'],
  tool: 'send_payment',
  title: 'Send a payment',
  description: 'Pays an invoice\nfrom the company account',
  arguments: { to: 'acme@example.com', amount_eur: 120 },
  risk: 'critical',
};

function entry(changes: Record<string, unknown> = {}, removed: readonly string[] = []): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...FULL, ...changes };
  for (const member of removed) delete copy[member];
  return copy;
}

function parserAccepts(value: unknown): boolean {
  try {
    parseToolCallDetails(JSON.stringify(value), anyRegistered);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    expect((error as OAuthError).code).toBe('invalid_authorization_details');
    return false;
  }
}

const CASES: readonly (readonly [string, unknown, boolean])[] = [
  ['the full entry', [FULL], true],
  ['the smallest entry', [{ type: TOOL_CALL_TYPE, locations: [MCP], tool: 't', arguments: {} }], true],
  ['a loopback http location', [entry({ locations: ['http://127.0.0.1:8931/mcp'] })], true],
  ['an http localhost location', [entry({ locations: ['http://localhost:3000/'] })], true],
  ['an http [::1] location', [entry({ locations: ['http://[::1]/mcp'] })], true],
  ['a location with a query', [entry({ locations: ['https://mcp.example.com/mcp?tenant=a'] })], true],
  ['a location without path', [entry({ locations: ['https://mcp.example.com'] })], true],
  ['255 astral characters of tool', [entry({ tool: '😀'.repeat(255) })], true],
  ['a description of 2000 characters with line feeds', [entry({ description: `${'a\n'.repeat(999)}ab` })], true],
  ['each risk level', [entry({ risk: 'low' })], true],
  ['nested arguments', [entry({ arguments: { a: [{ b: null }, 1.5, 'x'], c: { d: true } } })], true],
  ['no array', FULL, false],
  ['an empty array', [], false],
  ['two entries', [FULL, FULL], false],
  ['a string entry', ['x'], false],
  ['a null entry', [null], false],
  ['another type', [entry({ type: 'payment_initiation' })], false],
  ['no type', [entry({}, ['type'])], false],
  ['an unknown member', [entry({ datatypes: [] })], false],
  ['no locations', [entry({}, ['locations'])], false],
  ['no tool', [entry({}, ['tool'])], false],
  ['no arguments', [entry({}, ['arguments'])], false],
  ['two locations', [entry({ locations: [MCP, MCP] })], false],
  ['an empty locations', [entry({ locations: [] })], false],
  ['a location that is no string', [entry({ locations: [1] })], false],
  ['a plain http location', [entry({ locations: ['http://mcp.example.com/mcp'] })], false],
  ['a location with fragment', [entry({ locations: [`${MCP}#top`] })], false],
  ['a location with user info', [entry({ locations: ['https://user@mcp.example.com/mcp'] })], false],
  ['a location with an empty user info', [entry({ locations: ['https://@mcp.example.com/mcp'] })], false],
  ['a location with a space', [entry({ locations: ['https://mcp.example.com/a b'] })], false],
  ['a relative location', [entry({ locations: ['/mcp'] })], false],
  ['an ftp location', [entry({ locations: ['ftp://mcp.example.com/'] })], false],
  ['an upper-case scheme', [entry({ locations: ['HTTPS://mcp.example.com/mcp'] })], false],
  ['a loopback-looking host', [entry({ locations: ['http://127.0.0.1.example.com/'] })], false],
  ['actions another verb', [entry({ actions: ['read'] })], false],
  ['actions empty', [entry({ actions: [] })], false],
  ['actions twice', [entry({ actions: ['call', 'call'] })], false],
  ['an empty tool', [entry({ tool: '' })], false],
  ['256 characters of tool', [entry({ tool: 'x'.repeat(256) })], false],
  ['256 astral characters of tool', [entry({ tool: '😀'.repeat(256) })], false],
  ['a tool with a line feed', [entry({ tool: 'a\nb' })], false],
  ['a tool with DEL', [entry({ tool: 'a\u007fb' })], false],
  ['a tool with a C1 control', [entry({ tool: 'a\u0090b' })], false],
  ['a tool with a lone surrogate', [entry({ tool: 'a\ud800b' })], false],
  ['a numeric tool', [entry({ tool: 5 })], false],
  ['an empty title', [entry({ title: '' })], false],
  ['201 characters of title', [entry({ title: 't'.repeat(201) })], false],
  ['a title with a tab', [entry({ title: 'a\tb' })], false],
  ['an empty description', [entry({ description: '' })], false],
  ['2001 characters of description', [entry({ description: 'd'.repeat(2001) })], false],
  ['a description with a carriage return', [entry({ description: 'a\r\nb' })], false],
  ['a null description', [entry({ description: null })], false],
  ['array arguments', [entry({ arguments: [] })], false],
  ['null arguments', [entry({ arguments: null })], false],
  ['string arguments', [entry({ arguments: 'x' })], false],
  ['an unknown risk', [entry({ risk: 'high' })], false],
  ['a null risk', [entry({ risk: null })], false],
];

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = { n: value };
  return value;
}

describe('docs/tool-call.schema.json and parseToolCallDetails', () => {
  it.each(CASES)('agree on %s (valid: %s)', (_name, value, valid) => {
    expect(validate(value)).toBe(valid);
    expect(parserAccepts(value)).toBe(valid);
  });

  it('agree that every canonical entry the parser writes is valid', () => {
    const texts = fc.record(
      {
        tool: fc.stringMatching(/^[a-z_]{1,30}$/),
        title: fc.string({ minLength: 1, maxLength: 30 }).filter((s) => /^[\x20-\x7e]+$/.test(s)),
        arguments: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }),
        risk: fc.constantFrom('low', 'medium', 'critical'),
      },
      { requiredKeys: ['tool', 'arguments'] },
    );
    fc.assert(
      fc.property(texts, (members) => {
        const value = [{ type: TOOL_CALL_TYPE, locations: [MCP], ...members }];
        const canonical = canonicalDetailJson(parseToolCallDetails(JSON.stringify(value), anyRegistered));
        expect(validate([JSON.parse(canonical)])).toBe(true);
      }),
    );
  });

  it('leaves to the parser the limits the schema does not express: sizes, depth and the registry', () => {
    const beyond: unknown[] = [
      [entry({ arguments: nested(17) })],
      [entry({ arguments: { a: 'x'.repeat(32 * 1024) } })],
      [entry({ arguments: { a: 'x'.repeat(64 * 1024) } })],
    ];
    for (const value of beyond) {
      expect(validate(value)).toBe(true);
      expect(parserAccepts(value)).toBe(false);
    }
    expect(validate([FULL])).toBe(true);
    expect(() => parseToolCallDetails(JSON.stringify([FULL]), () => false)).toThrow(/not a registered MCP server/);
  });
});
