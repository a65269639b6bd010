import type { FieldIssue } from '@broker/domain';
import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { RefusedJsonBody } from '../body/refused-json-body';
import { RequestValidationError, type RequestPart } from '../errors/request-errors';

/** At most this many issues are reported for one request (a 1 MiB body can break a rule 100,000 times). */
export const MAX_REPORTED_ISSUES = 100;

/** Keys that name an object's prototype machinery: Nest's pipe deletes them silently; the broker refuses them. */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

class ValidationIssues extends Error {
  constructor(readonly issues: FieldIssue[]) {
    super('validation failed');
  }
}

/** The failures as field issues, depth first, at most {@link MAX_REPORTED_ISSUES} (no spread: it overflows on long lists). */
function flatten(errors: readonly ValidationError[], prefix = '', issues: FieldIssue[] = []): FieldIssue[] {
  for (const error of errors) {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    for (const [constraint, problem] of Object.entries(error.constraints ?? {})) {
      if (issues.length >= MAX_REPORTED_ISSUES) return issues;
      issues.push({ field, problem, constraint });
    }
    if (error.children && error.children.length > 0) flatten(error.children, field, issues);
  }
  return issues;
}

/** A key as named in a field path: printable, at most 64 characters. */
function pathSegment(key: string): string {
  const printable = key.replace(/[^\x20-\x7E]/g, '?');
  return printable.length > 64 ? `${printable.slice(0, 61)}...` : printable;
}

/**
 * The path of the first key named `__proto__`, `constructor` or `prototype` anywhere in
 * the value, or undefined. Iterative (the depth is bounded by the body parser, but nothing
 * here relies on it); the path is built only for the key found.
 */
function prototypeKeyPath(root: unknown): string | undefined {
  if (root === null || typeof root !== 'object') return undefined;
  interface Node {
    readonly value: object;
    readonly parent: Node | undefined;
    readonly key: string;
  }
  const pathOf = (node: Node | undefined, key: string): string => {
    const segments = [pathSegment(key)];
    for (let at = node; at?.parent !== undefined; at = at.parent) segments.unshift(pathSegment(at.key));
    return segments.join('.');
  };
  const stack: Node[] = [{ value: root, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    for (const key of Object.keys(node.value)) {
      if (PROTOTYPE_KEYS.has(key)) return pathOf(node, key);
      const child = (node.value as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push({ value: child, parent: node, key });
    }
  }
  return undefined;
}

function partOf(metadata: ArgumentMetadata): RequestPart {
  switch (metadata.type) {
    case 'body':
      return 'body';
    case 'query':
      return 'query';
    case 'param':
      return 'param';
    case 'custom':
      return 'header';
  }
}

/**
 * DTO validation for every handler argument: unknown fields rejected
 * (docs/http-api.md), values transformed to the DTO's types, and every failure a
 * `RequestValidationError` naming the fields, so the envelope can say which part of
 * the request was wrong.
 *
 * A key named `__proto__`, `constructor` or `prototype` is refused (400 naming
 * it), where Nest's pipe would delete it silently (`{"granted_permission_sets":
 * {"__proto__": [...]}}` became the `{}` that deletes a grant); a body the parser refused
 * (`RefusedJsonBody`) is refused here, where the handler reads it, after authentication.
 */
export class BrokerValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new ValidationIssues(flatten(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && value instanceof RefusedJsonBody) throw value.error;
    // Only what is validated against a DTO class; bodies parsed by hand (approvals) keep every key.
    if (metadata.type !== 'custom' && this.toValidate(metadata)) {
      const path = prototypeKeyPath(value);
      if (path !== undefined)
        throw new RequestValidationError(partOf(metadata), [
          { field: path, problem: 'is not allowed (a prototype key)' },
        ]);
    }
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (error instanceof ValidationIssues) throw new RequestValidationError(partOf(metadata), error.issues);
      throw error;
    }
  }
}
