import { IsUUID } from 'class-validator';

export class AuthorizationIdParam {
  /** The enterprise authorization's id (the `sid` of its tokens). */
  @IsUUID('all', { message: 'authorization id must be a UUID' })
  authorizationId!: string;
}
