import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** An HTTPS server on 127.0.0.1 with a fresh self-signed certificate (for 127.0.0.1 and localhost). */
export interface HttpsDocumentServer {
  readonly port: number;
  /** PEM of the certificate, to trust it (e.g. `cimd.tls_ca_file`). */
  readonly caFile: string;
  /** Requests received, by path. */
  readonly hits: Map<string, number>;
  stop(): Promise<void>;
}

/**
 * Starts an HTTPS server whose answers `handler` decides. The certificate is generated
 * with the openssl command line (present wherever PostgreSQL's packages are installed).
 */
export async function startHttpsDocumentServer(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<HttpsDocumentServer> {
  const dir = mkdtempSync(join(tmpdir(), 'broker-tls-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  const hits = new Map<string, number>();
  const server: Server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (request, response) => {
    hits.set(request.url ?? '', (hits.get(request.url ?? '') ?? 0) + 1);
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    caFile: cert,
    hits,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
