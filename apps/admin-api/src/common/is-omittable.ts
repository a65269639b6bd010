import { ValidateIf } from 'class-validator';

/**
 * The field may be left out, but `null` is a value like any other and meets the field's
 * own rules (class-validator's `IsOptional` skips them for `null` as well). For lists and
 * enumerations, where `null` says nothing the omission does not (the document
 * does not list `null`, so the server refuses it).
 */
export function IsOmittable(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}
