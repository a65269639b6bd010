import { IsUUID } from 'class-validator';

// A `.dto.ts` file so that the Swagger CLI plugin (nest-cli.json `dtoFileNameSuffix`) reads it:
// the OpenAPI document keeps `serviceId` as a path parameter of format uuid.
/** Path parameter of the `/api/third-party/{serviceId}/…` routes. */
export class ServiceIdParam {
  @IsUUID('all', { message: 'service id must be a UUID' })
  serviceId!: string;
}
