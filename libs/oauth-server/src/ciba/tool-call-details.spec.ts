import { OAuthError } from '@broker/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalDetailJson,
  jsonNestingDepth,
  parseToolCallDetails,
  TOOL_CALL_TYPE,
  type ToolCallDetail,
} from './tool-call-details';

const MCP = 'https://mcp.example.com/mcp';
const registered = (uri: string): boolean => uri === MCP || uri === 'http://127.0.0.1:8931/mcp';

const PAYMENT = {
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
  const copy: Record<string, unknown> = { ...PAYMENT, ...changes };
  for (const member of removed) delete copy[member];
  return copy;
}

/** The refusal's description, failing the test when the parser accepts or throws anything else. */
function refusal(raw: string): string {
  try {
    parseToolCallDetails(raw, registered);
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    expect((error as OAuthError).code).toBe('invalid_authorization_details');
    return (error as OAuthError).description;
  }
  throw new Error(`accepted: ${raw.slice(0, 200)}`);
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = { n: value };
  return value;
}

describe('parseToolCallDetails', () => {
  it('accepts the full entry and keeps every member', () => {
    const detail = parseToolCallDetails(JSON.stringify([PAYMENT]), registered);
    expect(detail).toEqual(PAYMENT);
  });

  it('accepts the smallest entry: type, locations, tool and empty arguments; a loopback http MCP server', () => {
    const raw = JSON.stringify([
      { type: TOOL_CALL_TYPE, locations: ['http://127.0.0.1:8931/mcp'], tool: 't', arguments: {} },
    ]);
    expect(parseToolCallDetails(raw, registered)).toEqual({
      type: TOOL_CALL_TYPE,
      locations: ['http://127.0.0.1:8931/mcp'],
      tool: 't',
      arguments: {},
    });
  });

  it('gives the registry check exactly locations[0] as sent', () => {
    const seen: string[] = [];
    parseToolCallDetails(JSON.stringify([entry()]), (uri) => {
      seen.push(uri);
      return true;
    });
    expect(seen).toEqual([MCP]);
  });

  const refusals: readonly (readonly [string, string, RegExp])[] = [
    ['not JSON', '[{', /not valid JSON/],
    ['an object, not an array', JSON.stringify(PAYMENT), /must be a JSON array/],
    ['a string', '"x"', /must be a JSON array/],
    ['null', 'null', /must be a JSON array/],
    ['an empty array', '[]', /must hold one entry/],
    ['two entries', JSON.stringify([PAYMENT, PAYMENT]), /one tool call per request/],
    ['a non-object entry', '[1]', /must be a JSON object/],
    ['an array entry', '[[]]', /must be a JSON object/],
    ['a null entry', '[null]', /must be a JSON object/],
    ['no type', JSON.stringify([entry({}, ['type'])]), /has no type/],
    [
      'another type',
      JSON.stringify([entry({ type: 'payment_initiation' })]),
      /unknown authorization_details type "payment_initiation"/,
    ],
    ['a type that is no string', JSON.stringify([entry({ type: 7 })]), /unknown authorization_details type/],
    ['an unknown member', JSON.stringify([entry({ datatypes: ['x'] })]), /unknown member "datatypes"/],
    [
      'a __proto__ member',
      `[${JSON.stringify(PAYMENT).slice(0, -1)},"__proto__":{"x":1}}]`,
      /unknown member "__proto__"/,
    ],
    ['no locations', JSON.stringify([entry({}, ['locations'])]), /has no locations/],
    ['no tool', JSON.stringify([entry({}, ['tool'])]), /has no tool/],
    ['no arguments', JSON.stringify([entry({}, ['arguments'])]), /has no arguments/],
    ['locations a string', JSON.stringify([entry({ locations: MCP })]), /exactly one URI/],
    ['two locations', JSON.stringify([entry({ locations: [MCP, MCP] })]), /exactly one URI/],
    ['no location', JSON.stringify([entry({ locations: [] })]), /exactly one URI/],
    ['a plain http location', JSON.stringify([entry({ locations: ['http://mcp.example.com/mcp'] })]), /https URI/],
    ['a relative location', JSON.stringify([entry({ locations: ['/mcp'] })]), /https URI/],
    ['a location with fragment', JSON.stringify([entry({ locations: [`${MCP}#x`] })]), /without fragment/],
    [
      'a location with user info',
      JSON.stringify([entry({ locations: ['https://u:p@mcp.example.com/mcp'] })]),
      /user info/,
    ],
    [
      'a location with an empty user info',
      JSON.stringify([entry({ locations: ['https://@mcp.example.com/mcp'] })]),
      /user info/,
    ],
    [
      'a location with an upper-case scheme',
      JSON.stringify([entry({ locations: ['HTTPS://mcp.example.com/mcp'] })]),
      /https URI/,
    ],
    [
      'an unregistered location',
      JSON.stringify([entry({ locations: ['https://other.example.com/mcp'] })]),
      /not a registered MCP server/,
    ],
    ['actions another verb', JSON.stringify([entry({ actions: ['read'] })]), /actions must be \["call"\]/],
    ['actions twice', JSON.stringify([entry({ actions: ['call', 'call'] })]), /actions must be \["call"\]/],
    ['actions a string', JSON.stringify([entry({ actions: 'call' })]), /actions must be \["call"\]/],
    ['tool empty', JSON.stringify([entry({ tool: '' })]), /tool must be 1-255 characters/],
    ['tool 256 characters', JSON.stringify([entry({ tool: 'x'.repeat(256) })]), /tool must be 1-255 characters/],
    ['tool a number', JSON.stringify([entry({ tool: 1 })]), /tool must be a string/],
    ['tool with a control character', JSON.stringify([entry({ tool: 'a\u0007b' })]), /tool must not contain control/],
    ['tool with a line feed', JSON.stringify([entry({ tool: 'a\nb' })]), /tool must not contain control/],
    ['tool with a C1 control', JSON.stringify([entry({ tool: 'a\u0085b' })]), /tool must not contain control/],
    [
      'tool with a lone surrogate',
      '[' + JSON.stringify(entry({ tool: 'TOOL' })).replace('TOOL', 'a\\ud800b') + ']',
      /tool must not contain control/,
    ],
    ['title empty', JSON.stringify([entry({ title: '' })]), /title must be 1-200 characters/],
    ['title 201 characters', JSON.stringify([entry({ title: 't'.repeat(201) })]), /title must be 1-200/],
    ['title with a line feed', JSON.stringify([entry({ title: 'a\nb' })]), /title must not contain control/],
    [
      'description 2001 characters',
      JSON.stringify([entry({ description: 'd'.repeat(2001) })]),
      /description must be 1-2000/,
    ],
    ['description with a tab', JSON.stringify([entry({ description: 'a\tb' })]), /other than line feeds/],
    ['description null', JSON.stringify([entry({ description: null })]), /description must be a string/],
    ['arguments an array', JSON.stringify([entry({ arguments: [] })]), /arguments must be a JSON object/],
    ['arguments null', JSON.stringify([entry({ arguments: null })]), /arguments must be a JSON object/],
    ['arguments a string', JSON.stringify([entry({ arguments: '{}' })]), /arguments must be a JSON object/],
    ['arguments 17 deep', JSON.stringify([entry({ arguments: nested(17) })]), /nest at most 16 deep/],
    ['arguments beyond 32 KiB', JSON.stringify([entry({ arguments: { a: 'x'.repeat(32 * 1024) } })]), /at most 32 KiB/],
    ['risk unknown', JSON.stringify([entry({ risk: 'high' })]), /risk must be one of low, medium, critical/],
    ['risk null', JSON.stringify([entry({ risk: null })]), /risk must be one of/],
    ['more than 64 KiB', JSON.stringify([entry({ arguments: { a: 'x'.repeat(64 * 1024) } })]), /at most 64 KiB/],
    ['1 MiB', `[${' '.repeat(1024 * 1024)}]`, /at most 64 KiB/],
    ['100 000 opening brackets', '['.repeat(100_000), /at most 64 KiB/],
    ['60 000 opening brackets', '['.repeat(60_000), /nest at most 32 deep/],
    [
      '60 000 nested arrays inside the entry',
      `[{"type":"${TOOL_CALL_TYPE}","arguments":{"a":${'['.repeat(30_000)}${']'.repeat(30_000)}}}]`,
      /nest at most 32 deep/,
    ],
    ['33 nested arrays', `${'['.repeat(33)}${']'.repeat(33)}`, /nest at most 32 deep/],
    ['33 nested objects', JSON.stringify([entry({ arguments: nested(31) })]), /nest at most 32 deep/],
  ];

  it.each(refusals)('refuses %s with invalid_authorization_details', (_name, raw, description) => {
    expect(refusal(raw)).toMatch(description);
  });

  it('counts characters as code points: 255 astral characters are a valid tool name, and 16 levels of arguments pass', () => {
    const tool = '😀'.repeat(255);
    expect(parseToolCallDetails(JSON.stringify([entry({ tool })]), registered).tool).toBe(tool);
    expect(refusal(JSON.stringify([entry({ tool: '😀'.repeat(256) })]))).toMatch(/1-255 characters/);
    expect(parseToolCallDetails(JSON.stringify([entry({ arguments: nested(16) })]), registered).arguments).toEqual(
      nested(16),
    );
  });

  it('does not count brackets inside strings as nesting', () => {
    const args = { text: `${'['.repeat(40)}"\\${'{'.repeat(40)}` };
    expect(parseToolCallDetails(JSON.stringify([entry({ arguments: args })]), registered).arguments).toEqual(args);
    expect(jsonNestingDepth(JSON.stringify(args))).toBe(1);
    expect(jsonNestingDepth('[[]]')).toBe(2);
    expect(jsonNestingDepth(']]]][[[')).toBe(3);
  });

  it('names only the first problem, checking type before members', () => {
    expect(refusal(JSON.stringify([{ type: 'other', tool: 1, extra: true }]))).toMatch(
      /unknown authorization_details type/,
    );
    expect(refusal(JSON.stringify([{ type: TOOL_CALL_TYPE, extra: true }]))).toMatch(/unknown member "extra"/);
  });
});

describe('canonicalDetailJson', () => {
  it('writes the members in the fixed order with arguments in sorted-key form, whatever the order sent', () => {
    const raw =
      '[{"risk":"low","arguments":{"b":[{"y":1,"x":2}],"a":"é"},"tool":"t","locations":["https://mcp.example.com/mcp"],"type":"urn:agent-identity-broker:tool-call"}]';
    expect(canonicalDetailJson(parseToolCallDetails(raw, registered))).toBe(
      '{"type":"urn:agent-identity-broker:tool-call","locations":["https://mcp.example.com/mcp"],"tool":"t","arguments":{"a":"é","b":[{"x":2,"y":1}]},"risk":"low"}',
    );
  });

  it('keeps every present member of the full entry', () => {
    expect(JSON.parse(canonicalDetailJson(parseToolCallDetails(JSON.stringify([PAYMENT]), registered)))).toEqual(
      PAYMENT,
    );
  });
});

/** Text a tool name or title may hold: no C0 or C1 control character. */
const printable = (s: string): boolean =>
  [...s].every((c) => c.charCodeAt(0) >= 0x20 && (c.charCodeAt(0) < 0x7f || c.charCodeAt(0) > 0x9f));

/** A valid entry: every optional member present or not, arbitrary JSON arguments within the limits. */
const validEntry: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    type: fc.constant(TOOL_CALL_TYPE),
    locations: fc.constant([MCP]),
    actions: fc.constant(['call']),
    tool: fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme-ascii' }).filter(printable),
    title: fc.string({ minLength: 1, maxLength: 40 }).filter(printable),
    description: fc.stringMatching(/^[a-z \n]{1,60}$/),
    arguments: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 6 }),
    risk: fc.constantFrom('low', 'medium', 'critical'),
  },
  { requiredKeys: ['type', 'locations', 'tool', 'arguments'] },
);

describe('properties', () => {
  it('accepts every valid entry, and its canonical JSON parses back to the same canonical JSON', () => {
    fc.assert(
      fc.property(validEntry, (value) => {
        const detail = parseToolCallDetails(JSON.stringify([value]), registered);
        const canonical = canonicalDetailJson(detail);
        expect(canonicalDetailJson(parseToolCallDetails(`[${canonical}]`, registered))).toBe(canonical);
        expect(JSON.parse(canonical)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('answers any text either with an entry or with invalid_authorization_details, never another error', () => {
    const texts = fc.oneof(
      fc.string(),
      fc.json(),
      fc.jsonValue().map((value) => JSON.stringify([value])),
      validEntry.chain((value) =>
        fc
          .tuple(fc.constantFrom(...Object.keys(value)), fc.jsonValue({ maxDepth: 2 }))
          .map(([member, replacement]) => JSON.stringify([{ ...value, [member]: replacement }])),
      ),
      validEntry.chain((value) =>
        fc.nat({ max: JSON.stringify([value]).length }).map((cut) => JSON.stringify([value]).slice(0, cut)),
      ),
    );
    fc.assert(
      fc.property(texts, (raw) => {
        let detail: ToolCallDetail | undefined;
        try {
          detail = parseToolCallDetails(raw, registered);
        } catch (error) {
          expect(error).toBeInstanceOf(OAuthError);
          expect((error as OAuthError).code).toBe('invalid_authorization_details');
          return;
        }
        expect(detail.type).toBe(TOOL_CALL_TYPE);
      }),
      { numRuns: 500 },
    );
  });
});
