import { SetMetadata } from '@nestjs/common';

export const PUBLIC_ROUTE = 'broker:public-route';
export const CLIENT_AUTHENTICATED_ROUTE = 'broker:client-authenticated-route';
export const OPTIONAL_PRINCIPAL_ROUTE = 'broker:optional-principal-route';

/** Marks a route that needs no principal (health, JWKS, metadata). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_ROUTE, true);

/**
 * Marks a route that authenticates its caller by OAuth2 client authentication or a
 * bearer token instead of the principal header (token endpoint, gateway approvals).
 * The handler is then responsible for authentication.
 */
export const ClientAuthenticated = (): MethodDecorator & ClassDecorator =>
  SetMetadata(CLIENT_AUTHENTICATED_ROUTE, true);

/**
 * Marks a route that authenticates the principal when it can but lets the handler
 * decide what a missing principal means (the third-party OAuth callback always answers
 * with a redirect, never a JSON 401).
 */
export const OptionalPrincipal = (): MethodDecorator & ClassDecorator => SetMetadata(OPTIONAL_PRINCIPAL_ROUTE, true);
