/**
 * Argument patterns in words (README "Parameter patterns": minimatch, `*` not across `/`,
 * `**` across `/`, `?` one character, `\` escapes; non-string values match only their
 * canonical JSON text). The person picks a choice ("any file in /reports", "any query");
 * the glob itself is the advanced choice.
 */

/** JSON text with keys sorted (RFC 8785 for the values a browser parses): how the broker compares non-string arguments. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/** A glob that matches exactly `text` (`\` escapes `*`, `?`, `[`, `]` and itself). */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}

/** The text a glob without wildcards matches, or undefined when it has one. */
function literalOf(glob: string): string | undefined {
  let out = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i] as string;
    if (c === '\\') {
      if (i + 1 >= glob.length) return undefined;
      out += glob[i + 1];
      i += 1;
    } else if (c === '*' || c === '?' || c === '[' || c === ']') return undefined;
    else out += c;
  }
  return out;
}

/** The pattern field's starting text for a reviewed value: strings as an exact glob, anything else as its canonical JSON text. */
export function initialPattern(value: unknown): string {
  return typeof value === 'string' ? escapeGlob(value) : canonicalJson(value);
}

/** One way to widen an argument: its words and its glob (null: any value, the argument is not named). */
export interface PatternChoice {
  readonly id: 'exact' | 'in-folder' | 'under-folder' | 'domain' | 'any' | 'custom';
  readonly label: string;
  readonly glob: string | null;
}

/** Values longer than this are cut in a choice's label. */
const LABEL_CHARS = 60;

function shortened(text: string): string {
  const chars = Array.from(text);
  return chars.length <= LABEL_CHARS ? text : `${chars.slice(0, LABEL_CHARS).join('')}…`;
}

/** The choices offered for one reviewed argument, narrowest first; the custom glob comes last. */
export function choicesFor(name: string, value: unknown): PatternChoice[] {
  const any: PatternChoice = { id: 'any', label: `Any ${name}`, glob: null };
  const custom: PatternChoice = { id: 'custom', label: 'My own pattern (advanced)', glob: null };
  if (typeof value !== 'string') return [{ id: 'exact', label: 'Exactly this value', glob: canonicalJson(value) }, any];
  const choices: PatternChoice[] = [
    {
      id: 'exact',
      label: value === '' ? 'Exactly this (empty) value' : `Exactly “${shortened(value)}”`,
      glob: escapeGlob(value),
    },
  ];
  const slash = value.lastIndexOf('/');
  if (value.startsWith('/') && slash > 0 && !value.includes('\n')) {
    const folder = value.slice(0, slash);
    choices.push({ id: 'in-folder', label: `Any file in ${shortened(folder)}`, glob: `${escapeGlob(folder)}/*` });
    choices.push({
      id: 'under-folder',
      label: `Anything in ${shortened(folder)} or its subfolders`,
      glob: `${escapeGlob(folder)}/**`,
    });
  }
  const email = /^[^@\s/]+@([^@\s/]+\.[^@\s/]+)$/.exec(value);
  if (email !== null)
    choices.push({ id: 'domain', label: `Any address at ${email[1]}`, glob: `*@${escapeGlob(email[1] as string)}` });
  return [...choices, any, custom];
}

/** One row of the pattern form: the argument, its reviewed value, the choice picked and the text of a custom glob. */
export interface PatternRow {
  readonly name: string;
  readonly value: unknown;
  readonly choice: PatternChoice['id'];
  readonly custom: string;
}

export function initialRows(args: Record<string, unknown>): PatternRow[] {
  return Object.entries(args).map(([name, value]) => ({ name, value, choice: 'exact', custom: initialPattern(value) }));
}

/** The glob a row stands for; null: any value. */
export function rowGlob(row: PatternRow): string | null {
  if (row.choice === 'custom') return row.custom;
  return choicesFor(row.name, row.value).find((choice) => choice.id === row.choice)?.glob ?? null;
}

/**
 * The `params_pattern` the rows describe, or null when every argument is kept exactly as
 * reviewed (then the broker compares the whole call, so an extra argument is not allowed).
 * Only constrained arguments are named; the others take any value.
 */
export function toPattern(rows: readonly PatternRow[]): Record<string, string> | null {
  if (rows.every((row) => row.choice === 'exact')) return null;
  const pattern: Record<string, string> = {};
  for (const row of rows) {
    const glob = rowGlob(row);
    if (glob !== null)
      Object.defineProperty(pattern, row.name, { value: glob, enumerable: true, writable: true, configurable: true });
  }
  return pattern;
}

/** What a stored glob allows, in words: exactly a value (structured when it was not text), a phrase, or the glob itself. */
export type GlobMeaning =
  | { readonly kind: 'exactly'; readonly value: unknown }
  | { readonly kind: 'words'; readonly text: string }
  | { readonly kind: 'glob'; readonly glob: string };

export function globMeaning(glob: string, reviewed: unknown): GlobMeaning {
  if (reviewed !== undefined && typeof reviewed !== 'string' && glob === canonicalJson(reviewed))
    return { kind: 'exactly', value: reviewed };
  // A non-string value's canonical JSON text (`{"folders":[…]}`, compared as written): shown as the value it stands for.
  if (typeof reviewed !== 'string' && /^[[{]/.test(glob)) {
    try {
      return { kind: 'exactly', value: JSON.parse(glob) as unknown };
    } catch {
      // Not JSON after all: a glob.
    }
  }
  const literal = literalOf(glob);
  if (literal !== undefined) return { kind: 'exactly', value: literal };
  if (glob === '*') return { kind: 'words', text: 'any text without a “/”' };
  if (glob === '**') return { kind: 'words', text: 'any value' };
  const inFolder = /^(.*)\/\*$/.exec(glob);
  const folder = inFolder === null ? undefined : literalOf(inFolder[1] as string);
  if (folder !== undefined && folder !== '') return { kind: 'words', text: `any file in ${folder}` };
  const underFolder = /^(.*)\/\*\*$/.exec(glob);
  const tree = underFolder === null ? undefined : literalOf(underFolder[1] as string);
  if (tree !== undefined && tree !== '') return { kind: 'words', text: `anything in ${tree} or its subfolders` };
  const domain = glob.startsWith('*@') ? literalOf(glob.slice(2)) : undefined;
  if (domain !== undefined && domain !== '' && !domain.includes('/'))
    return { kind: 'words', text: `any address at ${domain}` };
  const prefix = glob.endsWith('*') && !glob.endsWith('**') ? literalOf(glob.slice(0, -1)) : undefined;
  if (prefix !== undefined && prefix !== '' && !prefix.endsWith('/'))
    return { kind: 'words', text: `anything starting with “${prefix}” (without a further “/”)` };
  return { kind: 'glob', glob };
}

const PROBLEMS: readonly [RegExp, (name: string) => string][] = [
  [
    /^does not match the reviewed value/,
    (name) =>
      `The choice for “${name}” leaves out the value you reviewed: it must include it, or this very call would not be allowed.`,
  ],
  [/^names an argument the reviewed call does not have/, (name) => `“${name}” is not an argument of this call.`],
  [/^must be at most \d+ bytes/, (name) => `The pattern for “${name}” is too long.`],
  [/^must be a glob string/, (name) => `The pattern for “${name}” must be text.`],
  [/^argument names are/, (name) => `“${name}” is not a name an argument can have.`],
];

/**
 * A refused pattern (422 `invalid_pattern`: `params_pattern.role: does not match …; …`) in
 * words, one sentence per argument; a message of another shape is kept as it is.
 */
export function patternErrorWords(message: string): string[] {
  const parts = message.split('; ');
  const words = parts.map((part) => {
    const match = /^params_pattern(?:\.(.*?))?: (.*)$/s.exec(part);
    if (match === null) return undefined;
    const [, name, problem] = match;
    if (name === undefined)
      return /^at most \d+/.test(problem ?? '') ? 'Too many arguments are limited at once.' : undefined;
    return PROBLEMS.find(([test]) => test.test(problem ?? ''))?.[1](name);
  });
  return words.every((word): word is string => word !== undefined) ? words : [message];
}

/** A reviewed value as a phrase: text in quotes, anything else as its JSON text; long values cut. */
function valuePhrase(value: unknown): string {
  return typeof value === 'string' ? `“${shortened(value)}”` : shortened(canonicalJson(value));
}

/** One row's limit as a phrase ("whose path is exactly “/a.pdf”", "whose path is any file in /reports"); null: left free. */
function rowPhrase(row: PatternRow): string | null {
  const glob = rowGlob(row);
  if (glob === null) return null;
  if (row.choice === 'exact') return `whose ${row.name} is exactly ${valuePhrase(row.value)}`;
  const meaning = globMeaning(glob, row.value);
  if (meaning.kind === 'exactly') return `whose ${row.name} is exactly ${valuePhrase(meaning.value)}`;
  if (meaning.kind === 'words') return `whose ${row.name} is ${meaning.text}`;
  return `whose ${row.name} matches the pattern ${shortened(meaning.glob)}`;
}

function joinWords(parts: readonly string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1] as string}`;
}

/**
 * What a session or permanent approval made of these rows allows, in sentences, before the person decides:
 * which arguments are pinned to which values, which are left free, and what happens to arguments the reviewed
 * call did not have. Kept exactly (no pattern), the broker compares the whole call, so nothing else is allowed;
 * with a pattern, arguments it does not name may be anything (docs/approvals.md, "Parameter patterns").
 */
export function coverageWords(rows: readonly PatternRow[]): string[] {
  if (rows.length === 0) return ['Only calls without arguments.'];
  const pinned = rows.map(rowPhrase).filter((phrase): phrase is string => phrase !== null);
  const free = rows.filter((row) => rowGlob(row) === null).map((row) => row.name);
  if (toPattern(rows) === null)
    return [
      `Only calls ${joinWords(pinned)}.`,
      'A call with any other value, or with an argument this call does not have, asks you again.',
    ];
  return [
    ...(pinned.length === 0 ? ['Any arguments: no argument is limited.'] : [`Calls ${joinWords(pinned)}.`]),
    ...(free.length === 0 ? [] : [`${joinWords(free)} may be anything.`]),
    'Every other argument may be anything too, including arguments this call does not have.',
  ];
}
