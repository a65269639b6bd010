import type { FieldIssue } from '@broker/domain';
import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { RequestValidationError, type RequestPart } from '../errors/request-errors';

class ValidationIssues extends Error {
  constructor(readonly issues: FieldIssue[]) {
    super('validation failed');
  }
}

function flatten(errors: readonly ValidationError[], prefix = ''): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const error of errors) {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    for (const [constraint, problem] of Object.entries(error.constraints ?? {})) issues.push({ field, problem, constraint });
    if (error.children && error.children.length > 0) issues.push(...flatten(error.children, field));
  }
  return issues;
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
 * DTO validation for every handler argument: unknown fields rejected (API.md
 * "Conventions"), values transformed to the DTO's types, and every failure a
 * `RequestValidationError` naming the fields, so the envelope can say which part of
 * the request was wrong.
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
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (error instanceof ValidationIssues) throw new RequestValidationError(partOf(metadata), error.issues);
      throw error;
    }
  }
}
