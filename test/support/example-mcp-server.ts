import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** `node examples/mcp/server.mjs`, as a reader starts it: the MCP server of examples/mcp. */
export interface ExampleMcpServer {
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the example on `port` for the broker at `broker`, serving `url`; resolves once it says it listens. */
export async function startExampleMcpServer(options: {
  readonly port: number | string;
  readonly broker: string;
  readonly url: string;
}): Promise<ExampleMcpServer> {
  const child = spawn(
    process.execPath,
    ['examples/mcp/server.mjs', '--port', String(options.port), '--broker', options.broker, '--url', options.url],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('MCP server on')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`server.mjs exited ${String(code)}: ${output}`)));
  });
  return {
    process: child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
