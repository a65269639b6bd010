/**
 * Authentication guards: the trusted principal header, the session cookie, the
 * cross-site request policy, and the route markers that opt out of principal
 * authentication.
 */
export { AuthModule } from './auth.module';
export { AdminRoles, type AdminRole } from './admin-roles';
export { AdminRoleGuard } from './admin-role.guard';
export { CrossSiteRequestPolicy, allowedOrigins } from './cross-site-policy';
export type { BrokerRequest } from './broker-request';
export { Principal, MaybePrincipal } from './principal.decorator';
export { PrincipalGuard } from './principal.guard';
export {
  Public,
  ClientAuthenticated,
  OptionalPrincipal,
  PUBLIC_ROUTE,
  CLIENT_AUTHENTICATED_ROUTE,
  OPTIONAL_PRINCIPAL_ROUTE,
} from './public.decorator';
export { SessionCookieService, SESSION_COOKIE_NAME } from './session-cookie.service';
export { TrustedSources } from './trusted-sources';
