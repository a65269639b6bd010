import { testConfig, type PostgresCluster } from '@broker/testing';
import { EnvelopeCipher } from '@broker/vault';
import {
  adminApi,
  benchUsers,
  createBenchDatabase,
  createRegistry,
  exchangeBody,
  expectOk,
  FreshBodies,
  seed,
  startBenchBroker,
  USERS,
  type BenchDatabase,
  type BrokerOverrides,
  type Dataset,
  type Registry,
} from './deployment';
import type { GatewayIssuer } from './gateway-issuer';
import type { Measurement } from './load';
import { startScriptServer, type BrokerLaunch, type BrokerServer, type ServerProcess } from './servers';

/**
 * One dataset's database with a broker loaded by token exchanges: what token-exchange.measure.ts
 * (broker against the bare reference) and compare.against.ts (this build against another
 * commit's, and both against the reference) deploy.
 */
export interface BrokerDeployment {
  readonly dataset: Dataset;
  readonly db: BenchDatabase;
  readonly broker: BrokerServer;
  /** The bench service, its permission set and the dataset's agents, as the admin API created them. */
  readonly registry: Registry;
  /** The agent the bench users' subject tokens name (the first of the dataset's agents). */
  readonly agentId: string;
  /** Shape (b): one assertion and the USERS subject tokens, reused run after run. */
  readonly reusedBodies: readonly string[];
  /** Shape (a): a token pair never sent before, per request. */
  readonly fresh: FreshBodies;
  adminPost<T>(path: string, body: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** A deployment with the bare reference server (bench/reference-server.mjs) on the same database. */
export interface Deployment extends BrokerDeployment {
  readonly reference: ServerProcess & { readonly url: string };
}

/** A fresh token pair for one of the bench users (never sent before). */
function freshBody(issuer: GatewayIssuer, audience: string, agentId: string, principal: string): string {
  return exchangeBody(issuer.clientAssertion(audience), issuer.subjectToken(principal, agentId, audience));
}

/**
 * A database for `dataset`, the broker of `launch` (default: this checkout's build) on it,
 * the registry through its admin API, grants and sessions seeded; it has answered one
 * token exchange before anything is measured.
 */
export async function deployBroker(
  cluster: PostgresCluster,
  issuer: GatewayIssuer,
  dataset: Dataset,
  launch: BrokerLaunch = {},
  overrides: BrokerOverrides = {},
): Promise<BrokerDeployment> {
  const db = await createBenchDatabase(cluster);
  const { audience, kek } = db;
  const broker = await startBenchBroker(db, issuer, overrides, launch);
  try {
    const { post: adminPost } = adminApi(broker.adminUrl);
    const registry = await createRegistry(broker.adminUrl, dataset);
    const agentId = registry.agentIds[0] as string;
    const cipher = new EnvelopeCipher(testConfig({ encryption: { keys: [kek], current_key_id: kek.id } }));
    console.log(`${dataset.label}: ${await seed(db.databaseUrl, dataset, registry, cipher)}`);
    const users = benchUsers(dataset);
    const assertion = issuer.clientAssertion(audience);
    const reusedBodies = users.map((user) => exchangeBody(assertion, issuer.subjectToken(user, agentId, audience)));
    const fresh = new FreshBodies((n) => freshBody(issuer, audience, agentId, users[n % USERS] as string));
    // With a token pair of its own, so the fresh pool stays unsent.
    await expectOk(
      `${broker.enduserUrl}/oauth2/token`,
      freshBody(issuer, audience, agentId, users[USERS - 1] as string),
    );
    return { dataset, db, broker, registry, agentId, reusedBodies, fresh, adminPost, stop: () => broker.stop() };
  } catch (error) {
    await broker.stop();
    throw error;
  }
}

/** The bare reference on `deployment`'s database, answering with the same data. */
export async function startReference(
  deployment: BrokerDeployment,
  issuer: GatewayIssuer,
): Promise<ServerProcess & { readonly url: string }> {
  const { audience, databaseUrl, kek } = deployment.db;
  const reference = await startScriptServer('reference-server.mjs', [
    JSON.stringify({ jwk: issuer.publicJwk, issuer: issuer.issuer, audience, databaseUrl, kek }),
  ]);
  try {
    await expectOk(
      `${reference.url}/token`,
      freshBody(issuer, audience, deployment.agentId, benchUsers(deployment.dataset)[USERS - 1] as string),
    );
    return reference;
  } catch (error) {
    await reference.stop();
    throw error;
  }
}

/** `deployBroker` with the reference beside it. */
export async function deploy(cluster: PostgresCluster, issuer: GatewayIssuer, dataset: Dataset): Promise<Deployment> {
  const deployment = await deployBroker(cluster, issuer, dataset);
  let reference: (ServerProcess & { readonly url: string }) | undefined;
  try {
    reference = await startReference(deployment, issuer);
  } catch (error) {
    await deployment.stop();
    throw error;
  }
  const { stop: stopReference } = reference;
  return { ...deployment, reference, stop: async () => void (await Promise.all([deployment.stop(), stopReference()])) };
}

/** The token-exchange load shapes; each run of a shape gets its bodies from `bodies` and reports back. */
export interface TokenExchangeShape {
  readonly name: string;
  bodies(deployment: BrokerDeployment): { bodies: readonly string[]; cycle: boolean };
  spent?(deployment: BrokerDeployment, run: Measurement): void;
}
export const SHAPES: readonly TokenExchangeShape[] = [
  {
    name: '(a) fresh tokens',
    bodies: (d) => ({ bodies: d.fresh.ready(), cycle: false }),
    spent: (d, run) => d.fresh.spend(run),
  },
  { name: '(b) reused tokens', bodies: (d) => ({ bodies: d.reusedBodies, cycle: true }) },
];
