import { isHttpsOrLoopbackUrl, OAuthError, parseAbsoluteUrl } from '@broker/domain';

/**
 * The broker's `authorization_details` type (RFC 9396 §2): one tool call of an MCP server that a
 * person approves (docs/ciba.md "The authorization_details type", docs/tool-call.schema.json).
 */
export const TOOL_CALL_TYPE = 'urn:agent-identity-broker:tool-call';

/** One validated entry of type {@link TOOL_CALL_TYPE}. */
export interface ToolCallDetail {
  readonly type: typeof TOOL_CALL_TYPE;
  /** The MCP server's resource URI (RFC 9396 §2.2), a registered resource. */
  readonly locations: readonly [string];
  readonly actions?: readonly ['call'];
  readonly tool: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly risk?: 'low' | 'medium' | 'critical';
}

/** Most UTF-8 bytes of the `authorization_details` parameter. */
export const MAX_DETAILS_BYTES = 64 * 1024;
/** Deepest nesting of arrays and objects anywhere in the parameter (the outer array is 1). */
export const MAX_DETAILS_DEPTH = 32;
/** Most UTF-8 bytes of `arguments` as JSON text. */
export const MAX_ARGUMENTS_BYTES = 32 * 1024;
/** Deepest nesting inside `arguments` (the `arguments` object itself is 1). */
export const MAX_ARGUMENTS_DEPTH = 16;
const MAX_TOOL = 255;
const MAX_TITLE = 200;
const MAX_DESCRIPTION = 2000;

/** The members of an entry, in the order of its canonical JSON. */
const MEMBERS = ['type', 'locations', 'actions', 'tool', 'title', 'description', 'arguments', 'risk'] as const;
const KNOWN: ReadonlySet<string> = new Set(MEMBERS);
const RISKS: ReadonlySet<string> = new Set(['low', 'medium', 'critical']);

/** C0/C1 controls and lone surrogates (the approvals' rule for a tool name). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\p{Cs}]/u;
/** The same, except the line feed a description may hold. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_DESCRIPTION = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\p{Cs}]/u;

/** RFC 9396 §5: the refusal of an `authorization_details` parameter (400). */
function refused(description: string): OAuthError {
  return new OAuthError('invalid_authorization_details', description);
}

/** Unicode code points (what JSON Schema's `maxLength` counts). */
function codePoints(value: string): number {
  let count = 0;
  for (const _ of value) count += 1;
  return count;
}

/**
 * The deepest nesting of arrays and objects in JSON text, read without parsing (so hostile nesting
 * cannot exhaust the stack): brackets inside strings do not count. Stops once beyond `limit`.
 */
export function jsonNestingDepth(text: string, limit = Number.MAX_SAFE_INTEGER): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index += 1; // `\`: the next character is escaped
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      depth += 1;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if ((code === 0x5d || code === 0x7d) && depth > 0) depth -= 1;
  }
  return deepest;
}

/** The nesting depth of a parsed JSON value: a scalar 0, an array or object 1 + its deepest member. */
function valueDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const members = Array.isArray(value) ? (value as unknown[]) : Object.values(value);
  let deepest = 0;
  for (const member of members) deepest = Math.max(deepest, valueDepth(member));
  return 1 + deepest;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * RFC 8785 (JCS) text of a parsed JSON value: object members sorted by UTF-16 code units, no white
 * space, strings and numbers as `JSON.stringify` writes them (the approvals' `arguments_hash` form).
 */
export function canonicalJsonValue(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJsonValue(item)).join(',')}]`;
  const object = value as Record<string, unknown>;
  return `{${Object.keys(object)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJsonValue(object[key])}`)
    .join(',')}}`;
}

/** A text member: a string of `min`-`max` code points without the characters `unsafe` matches. */
function text(entry: Record<string, unknown>, member: string, max: number, unsafe: RegExp): string {
  const value = entry[member];
  if (typeof value !== 'string') throw refused(`${member} must be a string`);
  const length = codePoints(value);
  if (length < 1 || length > max) throw refused(`${member} must be 1-${max} characters`);
  if (unsafe.test(value))
    throw refused(
      member === 'description'
        ? 'description must not contain control characters other than line feeds'
        : `${member} must not contain control characters`,
    );
  return value;
}

/**
 * `locations`: exactly one https (or loopback http) URI without fragment or user info (no `@` in its authority, even
 * an empty one; the scheme written in lower case), a registered MCP server.
 */
function location(value: unknown, isRegisteredResource: (uri: string) => boolean): string {
  if (!Array.isArray(value) || value.length !== 1 || typeof value[0] !== 'string')
    throw refused('locations must be an array of exactly one URI: the MCP server the tool belongs to');
  const uri = value[0];
  const url = parseAbsoluteUrl(uri);
  if (
    url === undefined ||
    !/^https?:\/\/[^/?#@]*(?:[/?]|$)/.test(uri) ||
    !isHttpsOrLoopbackUrl(uri) ||
    uri.includes('#') ||
    url.username !== '' ||
    url.password !== ''
  )
    throw refused('locations[0] must be an https URI (http only on a loopback host) without fragment or user info');
  if (!isRegisteredResource(uri)) throw refused('locations[0] is not a registered MCP server');
  return uri;
}

/** `arguments`: a JSON object of at most 32 KiB as JSON text, nested at most 16 deep. */
function toolArguments(value: unknown): Readonly<Record<string, unknown>> {
  if (!isPlainObject(value)) throw refused('arguments must be a JSON object (may be empty)');
  if (valueDepth(value) > MAX_ARGUMENTS_DEPTH) throw refused(`arguments must nest at most ${MAX_ARGUMENTS_DEPTH} deep`);
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > MAX_ARGUMENTS_BYTES)
    throw refused(`arguments must be at most ${MAX_ARGUMENTS_BYTES / 1024} KiB as JSON`);
  return value;
}

/** Validates one entry (a JSON object) of our type; the first problem found is the error. */
function entryOf(entry: Record<string, unknown>, isRegisteredResource: (uri: string) => boolean): ToolCallDetail {
  if (!Object.hasOwn(entry, 'type')) throw refused('the authorization_details entry has no type');
  if (entry.type !== TOOL_CALL_TYPE)
    throw refused(
      typeof entry.type === 'string'
        ? `unknown authorization_details type ${JSON.stringify(entry.type.slice(0, 100))}: the supported type is ${TOOL_CALL_TYPE}`
        : `unknown authorization_details type: the supported type is ${TOOL_CALL_TYPE}`,
    );
  const unknown = Object.keys(entry).find((member) => !KNOWN.has(member));
  if (unknown !== undefined) throw refused(`unknown member ${JSON.stringify(unknown.slice(0, 100))} in the entry`);
  for (const required of ['locations', 'tool', 'arguments'])
    if (!Object.hasOwn(entry, required)) throw refused(`the entry has no ${required}`);
  const locations: readonly [string] = [location(entry.locations, isRegisteredResource)];
  if (Object.hasOwn(entry, 'actions')) {
    const actions = entry.actions;
    if (!Array.isArray(actions) || actions.length !== 1 || actions[0] !== 'call')
      throw refused('actions must be ["call"] when present');
  }
  const tool = text(entry, 'tool', MAX_TOOL, UNSAFE_TEXT);
  const title = Object.hasOwn(entry, 'title') ? text(entry, 'title', MAX_TITLE, UNSAFE_TEXT) : undefined;
  const description = Object.hasOwn(entry, 'description')
    ? text(entry, 'description', MAX_DESCRIPTION, UNSAFE_DESCRIPTION)
    : undefined;
  const args = toolArguments(entry.arguments);
  let risk: ToolCallDetail['risk'];
  if (Object.hasOwn(entry, 'risk')) {
    if (typeof entry.risk !== 'string' || !RISKS.has(entry.risk))
      throw refused('risk must be one of low, medium, critical');
    risk = entry.risk as ToolCallDetail['risk'];
  }
  return {
    type: TOOL_CALL_TYPE,
    locations,
    ...(Object.hasOwn(entry, 'actions') ? { actions: ['call'] as const } : {}),
    tool,
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    arguments: args,
    ...(risk === undefined ? {} : { risk }),
  };
}

/**
 * The `authorization_details` parameter (RFC 9396 §2) of a backchannel authentication request:
 * JSON array text holding exactly one entry of type {@link TOOL_CALL_TYPE}. Sizes and nesting are
 * checked before `JSON.parse`. Throws OAuthError('invalid_authorization_details', …) (400, RFC 9396
 * §5) naming the first problem; never anything else. `isRegisteredResource` checks `locations[0]`.
 */
export function parseToolCallDetails(raw: string, isRegisteredResource: (uri: string) => boolean): ToolCallDetail {
  if (Buffer.byteLength(raw, 'utf8') > MAX_DETAILS_BYTES)
    throw refused(`authorization_details must be at most ${MAX_DETAILS_BYTES / 1024} KiB`);
  if (jsonNestingDepth(raw, MAX_DETAILS_DEPTH) > MAX_DETAILS_DEPTH)
    throw refused(`authorization_details must nest at most ${MAX_DETAILS_DEPTH} deep`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw refused('authorization_details is not valid JSON');
  }
  if (!Array.isArray(parsed)) throw refused('authorization_details must be a JSON array');
  if (parsed.length === 0) throw refused('authorization_details must hold one entry: the tool call');
  if (parsed.length > 1) throw refused('one tool call per request: authorization_details must hold exactly one entry');
  const entry: unknown = parsed[0];
  if (!isPlainObject(entry)) throw refused('the authorization_details entry must be a JSON object');
  return entryOf(entry, isRegisteredResource);
}

/**
 * The stored and echoed text of ONE entry: its members in the order type, locations, actions, tool,
 * title, description, arguments, risk (absent ones omitted), `arguments` in RFC 8785 form, no white
 * space. The token's `authorization_details` claim is `[` + this + `]` parsed.
 */
export function canonicalDetailJson(detail: ToolCallDetail): string {
  const members: string[] = [];
  for (const member of MEMBERS) {
    const value = detail[member];
    if (value === undefined) continue;
    members.push(
      `${JSON.stringify(member)}:${member === 'arguments' ? canonicalJsonValue(value) : JSON.stringify(value)}`,
    );
  }
  return `{${members.join(',')}}`;
}
