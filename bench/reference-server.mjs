// The reference for the token-exchange benchmark: plain node:http, no framework, one
// process, doing exactly the broker's work per request: parse the form, verify two ES256
// JWTs with a key imported once, one indexed SELECT (a named, prepared statement) on the same database, AES-256-GCM
// decrypt, JSON out. Configuration arrives as JSON on argv[2]; prints its URL when ready.
//
// `--workers N`: the primary forks N node:cluster workers running this same
// server on one shared port (cluster's default scheduling, as the broker's `server.workers`
// does), prints the URL once all N listen, and stops them on SIGTERM. Without it, or with
// N = 1, one process as above.
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { importJWK, jwtVerify } from 'jose';
import pg from 'pg';

const require = createRequire(import.meta.url);
const { EnvelopeCipher, bindings } = require('../dist/libs/vault/src');

const SQL = `SELECT s.access_token_envelope, s.token_type, s.access_token_expires_at, r.service_id
  FROM service_protected_resources r
  JOIN grant_delegations d ON d.service_id = r.service_id
  JOIN grants g ON g.id = d.grant_id
  JOIN third_party_sessions s ON s.principal = g.principal AND s.service_id = r.service_id
 WHERE r.uri = $1 AND g.principal = $2 AND g.agent_id = $3 AND (g.valid_until IS NULL OR g.valid_until > now())
 LIMIT 1`;

const fail = (response, status, error) =>
  response
    .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    .end(JSON.stringify({ error, error_description: error }));

/** One server process; `announce`: print the URL (not in a cluster worker: the primary does). */
async function serve(announce) {
  const settings = JSON.parse(process.argv[2]);
  const key = await importJWK(settings.jwk, 'ES256');
  const cipher = new EnvelopeCipher({
    encryption: {
      keys: [{ id: settings.kek.id, key: Buffer.from(settings.kek.key, 'base64') }],
      current_key_id: settings.kek.id,
    },
  });
  const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: 10 });

  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (c) => chunks.push(c));
    request.on('end', async () => {
      try {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        await jwtVerify(form.get('client_assertion'), key, {
          issuer: settings.issuer,
          audience: settings.audience,
          algorithms: ['ES256'],
        });
        const { payload } = await jwtVerify(form.get('subject_token'), key, {
          issuer: settings.issuer,
          audience: settings.audience,
          algorithms: ['ES256'],
        });
        // A named statement, prepared once per connection, as the broker's hot query is.
        const { rows } = await pool.query({
          name: 'reference_lookup',
          text: SQL,
          values: [form.get('resource'), payload.sub, payload.azp],
        });
        if (rows.length === 0) return fail(response, 403, 'access_denied');
        const row = rows[0];
        const token = cipher
          .decrypt(row.access_token_envelope, bindings.sessionToken(row.service_id, payload.sub, 'access_token'))
          .toString('utf8');
        response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(
          JSON.stringify({
            access_token: token,
            token_type: row.token_type,
            issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          }),
        );
      } catch {
        fail(response, 400, 'invalid_request');
      }
    });
  });
  // In cluster workers, port 0 is one port for all of them: the primary binds it once and shares it.
  server.listen(0, '127.0.0.1', () => {
    if (announce) console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` }));
  });
}

const flag = process.argv.indexOf('--workers');
const workers = flag === -1 ? 1 : Number(process.argv[flag + 1]);
if (!Number.isInteger(workers) || workers < 1)
  throw new Error(`--workers must be a whole number from 1 (got ${process.argv[flag + 1]})`);

if (workers > 1 && cluster.isPrimary) {
  let listening = 0;
  cluster.on('listening', (_worker, address) => {
    listening += 1;
    if (listening === workers) console.log(JSON.stringify({ url: `http://127.0.0.1:${address.port}` }));
  });
  let stopping = false;
  let exited = 0;
  cluster.on('exit', () => {
    // A worker dying outside a stop is a broken measurement: the primary exits non-zero once all are gone.
    if (!stopping) process.exitCode = 1;
    exited += 1;
    if (exited === workers) process.exit();
  });
  process.on('SIGTERM', () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
  });
  for (let i = 0; i < workers; i += 1) cluster.fork();
} else {
  await serve(workers === 1);
}
