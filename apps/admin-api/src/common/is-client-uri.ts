import { clientUriProblem } from '@broker/domain';
import { ValidateBy, type ValidationArguments, type ValidationOptions } from 'class-validator';

/**
 * An agent's `client_uris` entry (`clientUriProblem`): an https Client ID Metadata Document
 * URL with a fixed origin, or a pattern whose `*` stands only for whole path segments; no dot
 * segments, user info or fragment, written in the URL standard's normal form. The message
 * names the first refused entry and why. A value rule (`400 validation failed`).
 */
export function IsClientUri(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isClientUri',
      validator: {
        validate: (value) => typeof value === 'string' && clientUriProblem(value) === undefined,
        defaultMessage: (args?: ValidationArguments) => {
          const values: unknown[] = Array.isArray(args?.value) ? (args.value as unknown[]) : [args?.value];
          const refused = values.find((value) => typeof value !== 'string' || clientUriProblem(value) !== undefined);
          const why =
            typeof refused === 'string' ? `${refused} ${clientUriProblem(refused) ?? ''}` : 'entries must be strings';
          return `$property must be https document URLs with a fixed origin and a path, * only as a whole path segment (${why})`;
        },
      },
    },
    options,
  );
}
