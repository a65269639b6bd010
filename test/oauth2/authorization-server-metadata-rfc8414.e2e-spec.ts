import { spawn } from 'node:child_process';
import { ASYMMETRIC_ALGORITHMS } from '@broker/domain';
import { freePort, http, startTestBroker, type TestBroker } from '@broker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOTH_SERVERS } from '../support/servers';

/**
 * Debian's interpreter, where `python3-authlib` is installed (`.ci/run` installs it when
 * missing): `python3` on PATH may be another one (a pyenv shim) without it.
 */
const PYTHON = '/usr/bin/python3';

/**
 * Validates the RFC 8414 document on stdin with authlib's `AuthorizationServerMetadata`, an
 * implementation of RFC 8414 §2 someone else wrote. authlib's https rule (every URL member
 * "MUST use https") is the one rule a broker on a loopback `http://127.0.0.1:<port>` issuer
 * cannot meet, and the only one relaxed, and only for that origin: authlib's
 * `validate_issuer`, `validate_authorization_endpoint`, `validate_token_endpoint`,
 * `validate_jwks_uri`, `validate_revocation_endpoint` and `validate_introspection_endpoint`
 * call `is_secure_transport`, which is replaced by one that also admits URLs of the test
 * broker's origin (authlib's own `AUTHLIB_INSECURE_TRANSPORT` would admit any URL). Everything
 * else (issuer without query or fragment, required members, arrays, the signing algorithms a
 * JWT client authentication method requires, no `none`) runs as authlib wrote it.
 *
 * Before that, each validator runs alone on the unchanged rules: the report lists every
 * failure, so the test sees that the relaxed rule is the only one the document breaks.
 */
const VALIDATE = String.raw`
import json, sys
try:
    import authlib.oauth2.rfc8414.models as models
    from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
except ImportError as error:
    print(json.dumps({"missing": str(error)}))
    sys.exit(3)

origin = sys.argv[1]
document = json.load(sys.stdin)

unchanged = {}
for key in AuthorizationServerMetadata.REGISTRY_KEYS:
    try:
        getattr(AuthorizationServerMetadata(document), "validate_" + key)()
    except ValueError as error:
        unchanged[key] = str(error)

secure = models.is_secure_transport
models.is_secure_transport = lambda uri: uri == origin or uri.startswith(origin + "/") or secure(uri)
try:
    AuthorizationServerMetadata(document).validate()
    print(json.dumps({"valid": True, "unchanged": unchanged}))
except ValueError as error:
    print(json.dumps({"valid": False, "error": str(error), "unchanged": unchanged}))
`;

interface AuthlibReport {
  readonly valid?: boolean;
  readonly error?: string;
  readonly missing?: string;
  /** Failures of authlib's validators run alone without the loopback exemption, by member. */
  readonly unchanged?: Readonly<Record<string, string>>;
}

/** The URL members authlib holds to https, each by `is_secure_transport`. */
const HTTPS_MEMBERS = [
  'issuer',
  'authorization_endpoint',
  'token_endpoint',
  'jwks_uri',
  'revocation_endpoint',
  'introspection_endpoint',
];

function authlibValidate(document: unknown, origin: string): Promise<AuthlibReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ['-c', VALIDATE, origin], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) =>
      reject(new Error(`${PYTHON} could not be started (${error.message}): install Debian's python3-authlib`)),
    );
    child.on('close', (code) => {
      if (code === 3) {
        // Not skipped, under CI=true or not: the metadata would go unchecked.
        reject(new Error(`authlib is missing for ${PYTHON} (${stdout.trim()}): apt-get install python3-authlib`));
        return;
      }
      if (code !== 0) {
        reject(new Error(`the authlib validation exited with ${String(code)}: ${stderr}`));
        return;
      }
      resolve(JSON.parse(stdout) as AuthlibReport);
    });
    child.stdin.end(JSON.stringify(document));
  });
}

/** An upstream authorization server that is never contacted: fetching the metadata calls nobody. */
function proxySettings(upstream: string): Record<string, unknown> {
  return {
    upstream_issuer_uri: upstream,
    upstream_authorize_endpoint: `${upstream}/auth`,
    upstream_token_endpoint: `${upstream}/token`,
    upstream_jwks_uri: `${upstream}/jwks`,
  };
}

/** An enterprise IdP found by discovery, which happens on its first ID-JAG, never at start-up. */
const ENTERPRISE = { trusted_issuers: [{ issuer_uri: 'https://idp.example.com', discovery: true }] };

/**
 * RFC 8414 §2 as someone else implemented it: the authorization server metadata of every mode,
 * fetched over HTTP, passes authlib's validator. In particular, each endpoint whose
 * authentication methods list a JWT method (`private_key_jwt`: the gateway's client assertion
 * at the token endpoint and at introspection) also lists its signing algorithms, which MUST
 * then be present (docs/oauth2.md "Metadata").
 */
describe.each([
  { mode: 'local' as const, features: 'CIMD, an enterprise IdP' },
  { mode: 'proxy' as const, features: 'an upstream' },
  { mode: 'hybrid' as const, features: 'an upstream, CIMD, an enterprise IdP' },
])('authorization server metadata in $mode mode ($features) passes an RFC 8414 validator', ({ mode }) => {
  let broker: TestBroker;
  let base: string;
  let metadata: Record<string, unknown>;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const upstream = `http://127.0.0.1:${await freePort()}`;
    broker = await startTestBroker({
      servers: BOTH_SERVERS,
      config: {
        server: { enduser: { port, public_url: base } },
        oauth2_authorization_server: {
          mode,
          ...(mode === 'local' ? {} : { proxy: proxySettings(upstream) }),
          ...(mode === 'proxy' ? {} : { cimd: { enabled: true }, enterprise: ENTERPRISE }),
        },
      },
    });
    const response = await http(`${base}/.well-known/oauth-authorization-server`);
    expect(response.status).toBe(200);
    metadata = response.json<Record<string, unknown>>();
  });

  afterAll(async () => {
    await broker?.stop();
  });

  it("is valid for authlib's AuthorizationServerMetadata, the loopback issuer's https rule aside", async () => {
    const report = await authlibValidate(metadata, base);
    expect(report).toMatchObject({ valid: true });
    // Without the loopback exemption, the only failures are the https rule, of URL members on this origin.
    const unchanged = Object.entries(report.unchanged ?? {});
    expect(unchanged.map(([member]) => member)).toContain('issuer');
    for (const [member, message] of unchanged) {
      expect(HTTPS_MEMBERS).toContain(member);
      expect(message).toBe(`"${member}" MUST use "https" scheme`);
      expect(String(metadata[member]).startsWith(`${base}/`) || metadata[member] === base).toBe(true);
    }
  });

  it('lists the gateway client assertion (private_key_jwt) with the asymmetric algorithms its verifier accepts', () => {
    expect(metadata.token_endpoint_auth_methods_supported).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'none',
      'private_key_jwt',
    ]);
    expect(metadata.token_endpoint_auth_signing_alg_values_supported).toEqual([...ASYMMETRIC_ALGORITHMS]);
    if (mode === 'proxy') {
      expect(metadata).not.toHaveProperty('introspection_endpoint_auth_signing_alg_values_supported');
      expect(metadata).not.toHaveProperty('revocation_endpoint_auth_signing_alg_values_supported');
      return;
    }
    expect(metadata.introspection_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(metadata.introspection_endpoint_auth_signing_alg_values_supported).toEqual([...ASYMMETRIC_ALGORITHMS]);
    // Revocation takes no JWT method, so RFC 8414 asks for no algorithms there.
    expect(metadata.revocation_endpoint_auth_methods_supported).not.toContain('private_key_jwt');
    expect(metadata).not.toHaveProperty('revocation_endpoint_auth_signing_alg_values_supported');
  });
});
