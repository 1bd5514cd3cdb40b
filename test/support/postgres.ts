/**
 * A real, throw-away PostgreSQL server for tests and benchmarks, started from the system
 * binaries (`/usr/lib/postgresql/<version>/bin`) in a temporary directory on a free port.
 *
 * initdb refuses to run as root, so as root every server command runs as the `postgres`
 * user through `runuser`; as any other user it runs directly.
 *
 * One server per test run: test/support/global-postgres.ts starts it and provides its admin
 * URL; `createTestDatabase()` makes a fresh database on it (or, when the run has no global
 * server, starts one for the current test file).
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface PostgresServer {
  /** Admin URL (user `postgres`, database `postgres`). */
  readonly url: string;
  readonly port: number;
  /** Process id of the postmaster (benchmarks account its CPU). */
  pid(): number;
  stop(): Promise<void>;
}

export interface StartOptions {
  /**
   * `false` (default for tests) turns fsync, synchronous_commit and full_page_writes off:
   * fast, and a crash of the test machine loses nothing that matters; deadlock_timeout is
   * 100 ms so deadlock tests resolve quickly. Benchmarks pass `true`
   * to measure with PostgreSQL's normal durability.
   */
  durable?: boolean;
}

/** Newest installed PostgreSQL binary directory, or undefined. */
export function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** A free TCP port on 127.0.0.1, found by binding port 0. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const asRoot = (): boolean => process.getuid?.() === 0;

async function pgCommand(bin: string, cmd: string, args: string[]): Promise<void> {
  const file = join(bin, cmd);
  if (asRoot()) await run('runuser', ['-u', 'postgres', '--', file, ...args]);
  else await run(file, args);
}

export async function startPostgres(options: StartOptions = {}): Promise<PostgresServer> {
  const bin = findPostgresBin();
  if (bin === undefined) {
    throw new Error('PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run scripts/setup.sh');
  }
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-pg-'));
  if (asRoot()) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  const durable = options.durable ?? false;
  const settings = [
    `-p ${port}`,
    `-k ${dir}`,
    `-c listen_addresses=127.0.0.1`,
    `-c max_connections=200`,
    ...(durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off', '-c deadlock_timeout=100ms']),
  ].join(' ');
  try {
    await pgCommand(bin, 'initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '-N']);
    await pgCommand(bin, 'pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    pid: () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
    async stop() {
      try {
        await pgCommand(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

let fileServer: Promise<PostgresServer> | undefined;
let counter = 0;

/** Admin URL of this run's server: the global one when provided, else one started for this file. */
async function adminUrl(): Promise<string> {
  const provided = process.env.MAILGATE_TEST_POSTGRES_URL;
  if (provided !== undefined && provided !== '') return provided;
  fileServer ??= startPostgres();
  return (await fileServer).url;
}

/** Creates an empty database on the test server and returns its URL. */
export async function createTestDatabase(prefix = 'mailgate_test'): Promise<string> {
  const admin = await adminUrl();
  counter += 1;
  const name = `${prefix}_${process.pid}_${counter}_${Date.now().toString(36)}`.toLowerCase();
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Stops the server this file started, if any (call from afterAll). */
export async function stopTestServer(): Promise<void> {
  const srv = fileServer;
  fileServer = undefined;
  if (srv !== undefined) await (await srv).stop();
}
