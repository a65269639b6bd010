/**
 * The admin API's field problems (`details: [{field, problem}]`, docs/admin-api.md "Error vocabulary") in words
 * for the registry's forms: the API's problem names the JSON property (`scope must be scope tokens…`); a person
 * reads the field's label instead, and a handful of rules get a sentence saying what to do.
 */

export interface FieldIssue {
  readonly field: string;
  readonly problem: string;
}

/** One field's problem, with the field's label in place of the property name. */
export function problemInWords(problem: string, label: string): string {
  const length = /must be longer than or equal to (\d+) characters/.exec(problem);
  if (length !== null)
    return length[1] === '1' ? `${label} is required.` : `${label} needs at least ${length[1]} characters.`;
  const tooLong = /must be shorter than or equal to (\d+) characters/.exec(problem);
  if (tooLong !== null) return `${label} is too long: at most ${tooLong[1]} characters.`;
  if (/must be an absolute http\(s\) URL/.test(problem))
    return `${label} must be a complete http:// or https:// address, such as https://accounts.example.com.`;
  if (/must be an absolute https URL \(http only on loopback\)/.test(problem))
    return `${label} must be a complete https:// address (http:// only for localhost).`;
  if (/must be scope tokens/.test(problem))
    return `${label} must be one word of printable characters, without spaces (for example calendar.read).`;
  if (/must not contain control characters/.test(problem)) return `${label} contains characters that are not allowed.`;
  if (/should not be empty|must be a string|should not be null/.test(problem)) return `${label} is required.`;
  if (/^duplicate scope$/.test(problem)) return 'A scope is listed more than once: each scope once.';
  // The API's sentence, its leading property name ("each value in x", "x") replaced by the label.
  const rest = problem.replace(/^(each value in )?[a-z_]+(\.\d+)*(\.[a-z_]+)? /, '');
  const sentence = rest === problem ? problem : `${label} ${rest}`;
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/** The problems not shown at any field of the form (the rest go in a summary). */
export function unplaced(errors: Record<string, string>, placed: (field: string) => boolean): string[] {
  return Object.entries(errors)
    .filter(([field]) => !placed(field))
    .map(([, words]) => words);
}

/**
 * A refused save's problems (400 `validation failed` / `invalid request body`) by field path, in words: the
 * form's own sentence for the rules it knows (`special`), else the API's problem with the field's label.
 */
export function formProblems(
  details: readonly FieldIssue[] | undefined,
  labelOf: (field: string) => string,
  special: (field: string, problem: string) => string | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { field, problem } of details ?? []) {
    if (out[field] !== undefined) continue;
    out[field] = special(field, problem) ?? problemInWords(problem, labelOf(field));
  }
  return out;
}

/** At most five names, then how many more. */
export function listed(names: readonly string[]): string {
  if (names.length <= 5) return names.join(', ');
  return `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;
}
