import { IsOptional, IsString, MinLength } from 'class-validator';

export class SessionTokenQuery {
  /** The authorization session token from the consent redirect of `/oauth2/authorize`. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  session_token?: string;
}
