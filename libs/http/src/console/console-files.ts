import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

/** One file of the built console, held in memory with its gzip form when that is smaller. */
export interface ConsoleFile {
  readonly contentType: string;
  readonly body: Buffer;
  readonly gzip: Buffer | undefined;
}

/** The built console: its `index.html` and the files under `assets/`, keyed by the name after `/assets/`. */
export interface ConsoleFiles {
  readonly index: ConsoleFile;
  readonly assets: ReadonlyMap<string, ConsoleFile>;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** Text formats worth compressing; images and fonts already are. */
const COMPRESSIBLE = /^(text\/|application\/json|image\/svg\+xml|application\/wasm)/;

/** The content type of a file name; unknown kinds are opaque bytes (with nosniff, never run as script). */
export function contentTypeOf(name: string): string {
  return CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

function load(path: string, name: string): ConsoleFile {
  const body = readFileSync(path);
  const contentType = contentTypeOf(name);
  let gzip: Buffer | undefined;
  if (COMPRESSIBLE.test(contentType) && body.length > 1024) {
    const compressed = gzipSync(body, { level: 9 });
    if (compressed.length < body.length) gzip = compressed;
  }
  return { contentType, body, gzip };
}

/**
 * Reads the built console once at start-up (a few hundred KiB): afterwards no request touches the file system, so no
 * request path can name a file outside the folder. Returns undefined when `index.html` is missing (not built).
 * Only regular files directly or deeper under `assets/` are served, by their exact relative name.
 */
export function readConsoleFiles(directory: string): ConsoleFiles | undefined {
  const root = resolve(directory);
  const indexPath = join(root, 'index.html');
  try {
    if (!statSync(indexPath).isFile()) return undefined;
  } catch {
    return undefined;
  }
  const assets = new Map<string, ConsoleFile>();
  const walk = (folder: string, prefix: string): void => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const name = `${prefix}${entry.name}`;
      if (entry.isDirectory()) walk(join(folder, entry.name), `${name}/`);
      else if (entry.isFile()) assets.set(name, load(join(folder, entry.name), entry.name));
    }
  };
  walk(join(root, 'assets'), '');
  return { index: load(indexPath, 'index.html'), assets };
}
