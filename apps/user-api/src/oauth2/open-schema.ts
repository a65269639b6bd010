import { ApiSchema, type ApiSchemaOptions } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * `@ApiSchema` with JSON Schema keywords beyond name and description (the swagger module
 * copies every member of the options into the component schema). Used where the OAuth
 * RFCs make an object open (`additionalProperties: true`: RFC 6749 §3.2 and §5.1 tell
 * both sides to ignore members they do not know; RFC 7517 §4 lets a JWK carry more), and
 * where some member names are forbidden (`propertyNames`, JSON Schema 2020-12, which
 * Nest's types do not list).
 */
export function ApiSchemaWith(
  options: ApiSchemaOptions & Pick<SchemaObject, 'additionalProperties'> & { propertyNames?: SchemaObject },
): ClassDecorator {
  return ApiSchema(options);
}
