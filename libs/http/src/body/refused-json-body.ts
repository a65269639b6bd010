import type { FieldIssue } from '@broker/domain';
import { RequestValidationError, type RequestBodyError } from '../errors/request-errors';

/**
 * How deep a JSON body may nest below its top-level object or array. The approvals API's
 * `arguments` and `metadata` may nest 64 levels counting themselves, one level below the
 * top, so this is the same bound for every body.
 */
export const MAX_JSON_NESTING = 64;

/**
 * A JSON body refused while it was parsed: malformed, nested deeper than
 * {@link MAX_JSON_NESTING} or holding a number beyond the double range (`1e400`, which
 * `JSON.parse` silently turns into `Infinity`). It stands in for the body so that the
 * refusal is raised where a handler reads its body, after the request was authenticated,
 * and in that API's vocabulary; nothing of the parsed value is kept.
 */
export class RefusedJsonBody {
  constructor(readonly error: RequestBodyError | RequestValidationError) {}
}

/** A body's field as named in an error: printable, at most 64 characters. */
function fieldName(key: string): string {
  const printable = key.replace(/[^\x20-\x7E]/g, '?');
  return printable.length > 64 ? `${printable.slice(0, 61)}...` : printable;
}

/**
 * The first break of the rules every JSON body follows, naming the top-level field it is
 * under, or undefined. Walked with an explicit stack, never recursion: a 1 MiB body can
 * nest 500,000 levels, which overflows any recursive walk (Nest's own `stripProtoKeys`
 * answered such a body 500 on every route).
 */
export function jsonBodyIssue(body: unknown): FieldIssue | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const values: object[] = [body];
  const depths: number[] = [0];
  const fields: string[] = ['body'];
  let issue: FieldIssue | undefined;
  const visit = (child: unknown, depth: number, field: string): void => {
    if (typeof child === 'number') {
      if (!Number.isFinite(child)) issue = { field, problem: 'is a number out of range' };
    } else if (child !== null && typeof child === 'object') {
      if (depth > MAX_JSON_NESTING) issue = { field, problem: `must not nest deeper than ${MAX_JSON_NESTING} levels` };
      values.push(child);
      depths.push(depth);
      fields.push(field);
    }
  };
  while (values.length > 0 && issue === undefined) {
    const value = values.pop() as object;
    const depth = (depths.pop() as number) + 1;
    const field = fields.pop() as string;
    if (Array.isArray(value)) {
      const items = value as unknown[];
      for (let i = 0; i < items.length && issue === undefined; i += 1) visit(items[i], depth, field);
    } else {
      const keys = Object.keys(value);
      // A field is named by its top-level key; everything below it is reported under that name.
      for (let i = 0; i < keys.length && issue === undefined; i += 1) {
        const key = keys[i] as string;
        visit((value as Record<string, unknown>)[key], depth, depth === 1 ? fieldName(key) : field);
      }
    }
  }
  return issue;
}

/** The parsed body, or a {@link RefusedJsonBody} when it breaks a rule of {@link jsonBodyIssue}. */
export function checkedJsonBody(body: unknown): unknown {
  const issue = jsonBodyIssue(body);
  return issue === undefined ? body : new RefusedJsonBody(new RequestValidationError('body', [issue]));
}
