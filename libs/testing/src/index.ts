/** Test helpers (imported by tests only): real servers, real databases, log capture, a frozen clock. */
export { startPostgresCluster, freePort, type PostgresCluster } from './postgres-cluster';
export { startPostgresWireProxy, type PostgresWireProxy, type ProxiedSession } from './postgres-wire-proxy';
export { testBackends, createPostgresDatabase, postgresServerUrl, type TestBackend } from './test-databases';
export { listenSessions, openPostgresReplicas } from './postgres-replicas';
export { prepareMigratedDatabases, type MigratedDatabases } from './migrated-databases';
export { LogCapture } from './log-capture';
export { eventually, type EventuallyOptions } from './eventually';
export { FrozenClock } from './frozen-clock';
export { FakeListenConnection } from './fake-listen-connection';
export { testConfig, testConfigTree, testKey, pgliteStorage, type FreshDatabaseOptions } from './test-config';
export { openTestRuntime, type TestRuntime } from './test-runtime';
export { routesOf, globalGuardsOf, runGuard, type NestRoute } from './nest-routes';
export { keepNestLogger } from './nest-logger';
export { modeConfig, NEVER_CALLED_UPSTREAM, testingModules, type TestingModules } from './nest-modules';
export { startTestBroker, type TestBroker, type TestBrokerOptions } from './test-broker';
export { http, httpJson, type HttpResponse, type HttpRequestOptions } from './http-client';
export { BrokerProcess, writeConfigFile, ENTRY_POINTS } from './broker-process';
export { ApiClient } from './api-client';
export { startOidcProvider, type TestOidcProvider } from './oidc-provider';
export { startThirdPartyProvider, completeAuthorization, type ThirdPartyProvider } from './third-party-provider';
export { startHttpsDocumentServer, type HttpsDocumentServer } from './https-document-server';
export { startJwtIssuer, type TestJwtIssuer, type SignOptions } from './jwt-issuer';
export {
  startEnterpriseIdp,
  type TestEnterpriseIdp,
  type EnterpriseIdpClient,
  type IdJagOptions,
} from './enterprise-idp';
export { startGatewayFixture, type GatewayFixture, type GatewayFixtureOptions } from './gateway-fixture';
export { registerContractServer, checkContract, coveredOperations, ContractViolation } from './openapi-contract';
export { installContractFetch } from './contract-fetch';
export {
  launchBrowser,
  openConsolePage,
  axeViolations,
  describeViolations,
  screenshots,
  type ScreenshotOptions,
  SCREENSHOT_DIR,
  type RecordedPage,
  type ConsolePageOptions,
  type AxeViolation,
} from './browser';
export { OtlpReceiver, OTLP_SPAN_KIND, type ReceivedSpan } from './otlp-receiver';
export { RefreshGate } from './refresh-gate';
