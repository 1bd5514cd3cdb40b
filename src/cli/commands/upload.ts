/**
 * `mailgate upload FILE... --url URL --key KEY`: the client of the upload API (docs/upload.md).
 * One file goes as its own body (message/rfc822, application/mbox for an mbox, or
 * application/vnd.ms-outlook-pst for an Outlook PST/OST, read from disk as it is sent), several
 * (or an Outlook .msg) as multipart/form-data; `--wait` polls each message's state.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import type { Command } from 'commander';
import { GatewayError } from '../../errors.js';
import { EXIT_FAILED } from '../exit-codes.js';
import { integerOption } from '../options.js';
import { codedError, isSuccess, request, type FileBody } from '../push/http.js';
import type { CliCommand, CliContext } from '../types.js';
import { writerFor, type Write } from '../write.js';

interface UploadFlags {
  url: string;
  key: string;
  name: string;
  idempotencyKey?: string;
  json?: boolean;
  wait?: boolean;
  waitTimeoutS: number;
  timeoutMs: number;
}

interface UploadResult {
  id: string;
  duplicate: boolean;
  dead?: { code: string; message: string };
  file?: string;
  index?: number;
}

interface ItemState {
  id: string;
  state: 'queued' | 'retrying' | 'delivered' | 'dead';
  error?: { code: string; message: string };
  [key: string]: unknown;
}

/** Between two polls of `--wait`. */
const POLL_MS = 500;
const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const PST_MAGIC = Buffer.from('!BDN');
const PST_TYPE = 'application/vnd.ms-outlook-pst';

type Kind = 'message/rfc822' | 'application/mbox' | 'application/vnd.ms-outlook' | typeof PST_TYPE;

/** What a file holds, as the server decides it: by the extension, else by the first bytes (an mbox starts with `From `). */
export function sniff(path: string, bytes: Buffer): Kind {
  const ext = extname(path).toLowerCase();
  if (ext === '.msg') return 'application/vnd.ms-outlook';
  if (ext === '.pst' || ext === '.ost') return PST_TYPE;
  if (ext === '.mbox' || ext === '.mbx') return 'application/mbox';
  if (ext === '.eml') return 'message/rfc822';
  if (bytes.subarray(0, OLE2.length).equals(OLE2)) return 'application/vnd.ms-outlook';
  if (bytes.subarray(0, PST_MAGIC.length).equals(PST_MAGIC)) return PST_TYPE;
  return bytes.subarray(0, 5).toString('latin1') === 'From ' ? 'application/mbox' : 'message/rfc822';
}

interface Body {
  contentType: string;
  body: Buffer | FileBody;
}

/** A multipart/form-data body with one `file` part per file. */
function multipart(files: ReadonlyArray<{ path: string; bytes: Buffer }>): Body {
  const boundary = `mailgate-${randomBytes(16).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const f of files) {
    const name = basename(f.path).replace(/["\r\n\\]/g, '_');
    const disposition = `Content-Disposition: form-data; name="file"; filename="${name}"`;
    const head = `--${boundary}\r\n${disposition}\r\nContent-Type: ${sniff(f.path, f.bytes)}\r\n\r\n`;
    parts.push(Buffer.from(head, 'utf8'), f.bytes, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}

function bodyOf(paths: readonly string[]): Body {
  if (paths.length === 1 && sniff(paths[0]!, head(paths[0]!)) === PST_TYPE) {
    return { contentType: PST_TYPE, body: { path: paths[0]!, length: statSync(paths[0]!).size } };
  }
  const files = paths.map((path) => {
    try {
      return { path, bytes: readFileSync(path) };
    } catch (err) {
      throw new GatewayError('MAILGATE_ERR_INPUT_NOT_FOUND', `cannot read ${path}: ${(err as Error).message}`, { cause: err });
    }
  });
  const only = files.length === 1 ? files[0]! : undefined;
  // An Outlook file has no media type of its own the API takes: it travels as a multipart file.
  const kind = only && sniff(only.path, only.bytes);
  if (only && kind !== 'application/vnd.ms-outlook') return { contentType: kind!, body: only.bytes };
  return multipart(files);
}

/** The first bytes of a file (enough to tell a PST from a message), or none when it cannot be read. */
function head(path: string): Buffer {
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(8);
      return buf.subarray(0, readSync(fd, buf, 0, 8, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return Buffer.alloc(0);
  }
}

const where = (r: UploadResult): string => `${r.file ?? '-'}${r.index === undefined ? '' : `#${r.index}`}`;

function resultLine(r: UploadResult): string {
  const state = r.dead ? `dead\t${r.dead.code}: ${r.dead.message}` : r.duplicate ? 'duplicate' : 'stored';
  return `${r.id}\t${where(r)}\t${state}`;
}

function stateLine(s: ItemState): string {
  return `${s.id}\t${s.state}${s.error ? `\t${s.error.code}: ${s.error.message}` : ''}`;
}

interface Waited {
  states: ItemState[];
  done: boolean;
  /** Why polling stopped early (an item the server does not know, a refused key). */
  failure?: string;
}

/** The coded error of a refused answer, for people. */
function refusal(status: number, text: string): string {
  const coded = codedError(text);
  return `HTTP ${status}${coded ? `: ${coded.code}: ${coded.message}` : ''}`;
}

/** Polls every id until it is delivered or dead, or the bound passes: the last state of each. */
async function waitFor(ids: readonly string[], flags: UploadFlags, headers: Record<string, string>): Promise<Waited> {
  const end = Date.now() + flags.waitTimeoutS * 1000;
  const states = new Map<string, ItemState>();
  const final = (s: ItemState | undefined) => s !== undefined && (s.state === 'delivered' || s.state === 'dead');
  const known = () => ids.flatMap((id) => states.get(id) ?? []);
  for (;;) {
    for (const id of ids) {
      if (final(states.get(id))) continue;
      const answer = await request(
        'GET',
        `${flags.url}/api/upload/${flags.name}/${encodeURIComponent(id)}`,
        headers,
        undefined,
        flags.timeoutMs,
      );
      if (!isSuccess(answer.status))
        return { states: known(), done: false, failure: `GET item ${id} answered ${refusal(answer.status, answer.text)}` };
      states.set(id, JSON.parse(answer.text) as ItemState);
    }
    const done = ids.every((id) => final(states.get(id)));
    if (done || Date.now() >= end) return { states: known(), done };
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

async function report(write: Write, results: UploadResult[], wait: Waited | undefined, json: boolean): Promise<void> {
  if (json) {
    const waited = wait && { states: wait.states, done: wait.done, ...(wait.failure !== undefined && { failure: wait.failure }) };
    return write(`${JSON.stringify({ results, ...waited })}\n`);
  }
  await write(`${results.map(resultLine).join('\n')}\n`);
  if (wait) await write(`${wait.states.map(stateLine).join('\n')}\n`);
}

async function upload(files: string[], flags: UploadFlags, ctx: CliContext): Promise<void> {
  const base = flags.url.replace(/\/+$/, '');
  const { contentType, body } = bodyOf(files);
  const auth = { authorization: `Bearer ${flags.key}` };
  const headers = {
    ...auth,
    'content-type': contentType,
    ...(flags.idempotencyKey !== undefined && { 'idempotency-key': flags.idempotencyKey }),
  };
  const answer = await request('POST', `${base}/api/upload/${flags.name}`, headers, body, flags.timeoutMs);
  if (answer.status !== 202) {
    const coded = codedError(answer.text);
    await writerFor(ctx.stdout)(flags.json === true ? `${JSON.stringify({ status: answer.status, error: coded ?? answer.text })}\n` : '');
    ctx.stderr.write(`mailgate: upload refused with ${refusal(answer.status, answer.text)}\n`);
    ctx.exitCode = EXIT_FAILED;
    return;
  }
  const { results } = JSON.parse(answer.text) as { results: UploadResult[] };
  const ids = [...new Set(results.map((r) => r.id))];
  const wait = flags.wait === true ? await waitFor(ids, { ...flags, url: base }, auth) : undefined;
  await report(writerFor(ctx.stdout), results, wait, flags.json === true);
  if (results.some((r) => r.dead) || wait?.states.some((s) => s.state === 'dead')) ctx.exitCode = EXIT_FAILED;
  if (wait?.failure !== undefined) {
    ctx.stderr.write(`mailgate: ${wait.failure}\n`);
    ctx.exitCode = EXIT_FAILED;
  } else if (wait && !wait.done) {
    ctx.stderr.write(`mailgate: MAILGATE_ERR_CLI_WAIT_TIMEOUT: not every message was delivered or dead after ${flags.waitTimeoutS} s\n`);
    ctx.exitCode = EXIT_FAILED;
  }
}

export const uploadCommand: CliCommand = {
  name: 'upload',
  register(program: Command, ctx: CliContext): void {
    program
      .command('upload')
      .description('send .eml, mbox, .msg and PST/OST files to an upload endpoint of mailgate serve (docs/upload.md) and print the ids')
      .argument(
        '<file...>',
        'the files: one goes as message/rfc822 (application/mbox for an mbox, application/vnd.ms-outlook-pst for a PST/OST, read from disk as sent), several as multipart/form-data',
      )
      .requiredOption('--url <url>', 'base URL of mailgate serve, e.g. http://127.0.0.1:8080')
      .requiredOption('--key <key>', "one of the endpoint's api_keys (sent as Authorization: Bearer)")
      .option('--name <name>', 'the upload endpoint (adapters.upload[].name)', 'uploads')
      .option('--idempotency-key <k>', 'Idempotency-Key: sending again with the same key and content stores nothing twice')
      .option('--wait', 'poll each message until it is delivered or dead and print the final states')
      .option('--wait-timeout-s <n>', 'with --wait: give up after this many seconds', integerOption(1, 86_400), 300)
      .option('--timeout-ms <n>', 'bound on each HTTP request, in ms', integerOption(1, 3_600_000), 60_000)
      .option('--json', 'one JSON object on stdout: {results} (with --wait also {states, done})')
      .action((files: string[], flags: UploadFlags) => upload(files, flags, ctx));
  },
};
