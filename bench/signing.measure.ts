import { verify as cryptoVerify, createPublicKey } from 'node:crypto';
import { SIGNING_ALGORITHMS, type SigningAlgorithm } from '@broker/domain';
import { describe, it } from 'vitest';
import { generateSigningKey, importPrivateKey, signCompactJws } from '@broker/oauth-server';

/**
 * What one access token's signature costs on this machine, per supported algorithm: the
 * token endpoint's own signing (`signCompactJws`, node:crypto with the imported key, as every
 * local grant signs) and a resource server's verification of it (`crypto.verify` with the
 * public key, as the broker's own introspection and an MCP server do). A realistic RFC 9068
 * header and claims; each figure is the median of five batches. Prints numbers; asserts
 * nothing about them.
 */
const BATCH = 2_000;
const BATCHES = 5;

const HEADER = { alg: 'ES256', kid: 'bench-key', typ: 'at+jwt' };
const CLAIMS = {
  iss: 'https://broker.example.com',
  sub: 'alice@example.com',
  aud: 'https://mcp.example.com/mcp',
  agent_id: '0b5a4c7e-3f1a-4f8e-9a0c-2d6f1e7b9c11',
  client_id: '0b5a4c7e-3f1a-4f8e-9a0c-2d6f1e7b9c11',
  scope: 'calendar.read calendar.write',
  iat: 1_764_400_000,
  exp: 1_764_400_300,
  jti: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e',
};

function medianMicroseconds(run: () => void): number {
  const perOp: number[] = [];
  for (let batch = 0; batch < BATCHES; batch += 1) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i += 1) run();
    perOp.push(Number(process.hrtime.bigint() - started) / 1e3 / BATCH);
  }
  perOp.sort((a, b) => a - b);
  return perOp[Math.floor(BATCHES / 2)] as number;
}

async function measure(algorithm: SigningAlgorithm): Promise<Record<string, string | number>> {
  const generated = await generateSigningKey(algorithm);
  const privateKey = importPrivateKey(generated.privateKeyDer);
  const publicKey = createPublicKey({ key: generated.publicJwk, format: 'jwk' });
  const header = { ...HEADER, alg: algorithm };
  // Warm-up: the first signatures pay for lazy initialisation.
  for (let i = 0; i < 200; i += 1) signCompactJws(header, CLAIMS, privateKey, algorithm);
  const signUs = medianMicroseconds(() => signCompactJws(header, CLAIMS, privateKey, algorithm));
  const token = signCompactJws(header, CLAIMS, privateKey, algorithm);
  const dot = token.lastIndexOf('.');
  const data = Buffer.from(token.slice(0, dot));
  const signature = Buffer.from(token.slice(dot + 1), 'base64url');
  const verifyOnce = (): void => {
    const ok =
      algorithm === 'ES256'
        ? cryptoVerify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)
        : cryptoVerify(algorithm === 'EdDSA' ? null : 'sha256', data, publicKey, signature);
    if (!ok) throw new Error(`${algorithm}: the signature does not verify`);
  };
  for (let i = 0; i < 200; i += 1) verifyOnce();
  const verifyUs = medianMicroseconds(verifyOnce);
  return {
    algorithm,
    'sign µs': Number(signUs.toFixed(1)),
    'verify µs': Number(verifyUs.toFixed(1)),
    'token bytes': token.length,
  };
}

describe('access token signatures by algorithm', () => {
  it('what one signature and one verification cost (median of batches)', async () => {
    const rows = [];
    for (const algorithm of SIGNING_ALGORITHMS) rows.push(await measure(algorithm));
    console.log(`\nsigning and verifying one access token, ${BATCHES} batches of ${BATCH}, median per operation`);
    console.table(rows);
  });
});
