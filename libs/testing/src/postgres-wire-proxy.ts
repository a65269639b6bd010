import { createServer, connect, type Server, type Socket } from 'node:net';

/** The protocol version 3.0 code of a StartupMessage (PostgreSQL protocol, "Message Formats"). */
const PROTOCOL_3 = 196_608;

/** One client connection through the proxy. */
export interface ProxiedSession {
  /** The `application_name` its StartupMessage named, if any. */
  readonly applicationName: string | undefined;
  /** The client closed its side (after `freeze`: it gave up on the silent connection). */
  readonly closedByClient: boolean;
  /**
   * Stops forwarding in both directions, closing nothing: what a NAT that dropped the flow
   * or a vanished host look like to both ends (bytes go nowhere, no FIN, no RST).
   */
  freeze(): void;
  /**
   * Runs `sql` (a simple Query) on the server connection; the client never sees the answer.
   * `UNLISTEN *` is a transaction pooler handing the server connection that ran `LISTEN` to
   * another client: the client's socket stays up and its notifications stop. Resolves once the
   * server has answered it (its ReadyForQuery), so the session is changed from then on.
   */
  runBehindClient(sql: string): Promise<void>;
}

/** A TCP proxy on loopback in front of a PostgreSQL server, whose sessions a test can break. */
export interface PostgresWireProxy {
  /** `targetUrl` with its host and port replaced by the proxy's. */
  readonly url: string;
  /** Sessions open now, optionally only those whose StartupMessage named `applicationName`. */
  sessions(applicationName?: string): ProxiedSession[];
  stop(): Promise<void>;
}

class Session implements ProxiedSession {
  applicationName: string | undefined;
  closedByClient = false;
  private frozen = false;
  /** Whether the server's bytes are framed into messages (not after an SSLRequest or an unparsed start). */
  private framed = false;
  private startup = Buffer.alloc(0);
  private started = false;
  private fromServer = Buffer.alloc(0);
  /** Answers to injected queries still to drop: one per query, up to its ReadyForQuery. */
  private swallowing = 0;
  /** Resolves each injected query's promise at its ReadyForQuery, in order. */
  private readonly answered: (() => void)[] = [];

  constructor(
    private readonly client: Socket,
    private readonly server: Socket,
    private readonly forget: (session: Session) => void,
  ) {
    client.on('data', (chunk: Buffer) => this.fromClient(chunk));
    server.on('data', (chunk: Buffer) => this.toClient(chunk));
    client.on('close', () => {
      this.closedByClient = true;
      server.destroy();
      forget(this);
    });
    server.on('close', () => {
      // A frozen session stays open towards the client whatever happens behind it.
      if (!this.frozen) client.destroy();
      forget(this);
    });
    client.on('error', () => undefined);
    server.on('error', () => undefined);
  }

  freeze(): void {
    this.frozen = true;
  }

  runBehindClient(sql: string): Promise<void> {
    if (!this.framed)
      return Promise.reject(new Error('runBehindClient: this session is not framed (SSL, or not started)'));
    const text = Buffer.from(`${sql}\0`);
    const message = Buffer.alloc(5 + text.length);
    message.write('Q', 0);
    message.writeInt32BE(4 + text.length, 1);
    text.copy(message, 5);
    this.swallowing += 1;
    const done = new Promise<void>((resolve) => this.answered.push(resolve));
    this.server.write(message);
    return done;
  }

  private fromClient(chunk: Buffer): void {
    if (this.frozen) return;
    if (!this.started) this.readStartup(chunk);
    this.server.write(chunk);
  }

  /** The first message: a StartupMessage names the application; anything else leaves the session unframed. */
  private readStartup(chunk: Buffer): void {
    this.startup = Buffer.concat([this.startup, chunk]);
    if (this.startup.length < 8) return;
    const length = this.startup.readInt32BE(0);
    if (this.startup.length < length) return;
    this.started = true;
    if (this.startup.readInt32BE(4) !== PROTOCOL_3) return;
    const fields = this.startup
      .subarray(8, length - 1)
      .toString('utf8')
      .split('\0');
    for (let i = 0; i + 1 < fields.length; i += 2)
      if (fields[i] === 'application_name') this.applicationName = fields[i + 1];
    this.framed = true;
  }

  private toClient(chunk: Buffer): void {
    if (this.frozen) return;
    if (!this.framed) {
      this.client.write(chunk);
      return;
    }
    this.fromServer = Buffer.concat([this.fromServer, chunk]);
    const pass: Buffer[] = [];
    while (this.fromServer.length >= 5) {
      const end = 1 + this.fromServer.readInt32BE(1);
      if (this.fromServer.length < end) break;
      const message = this.fromServer.subarray(0, end);
      this.fromServer = this.fromServer.subarray(end);
      const type = String.fromCharCode(message[0] ?? 0);
      // NotificationResponse ('A') is asynchronous: never part of an injected query's answer.
      if (this.swallowing > 0 && type !== 'A') {
        if (type === 'Z') {
          this.swallowing -= 1;
          this.answered.shift()?.();
        }
        continue;
      }
      pass.push(message);
    }
    if (pass.length > 0) this.client.write(Buffer.concat(pass));
  }
}

/**
 * Starts a proxy on 127.0.0.1 forwarding to the server of `targetUrl` (a `postgres://` URL
 * with a host and port; no SSL). Each connection is a session the test can find by its
 * `application_name` and freeze, or run a statement on behind the client's back.
 */
export async function startPostgresWireProxy(targetUrl: string): Promise<PostgresWireProxy> {
  const target = new URL(targetUrl);
  const sessions = new Set<Session>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    sessions.add(new Session(client, upstream, (session) => sessions.delete(session)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP address');
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    sessions: (applicationName) =>
      [...sessions].filter((s) => applicationName === undefined || s.applicationName === applicationName),
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
