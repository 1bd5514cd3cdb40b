/**
 * Fuzzer (`npm run fuzz`; not part of the timed benchmarks): mutated real mail from samples/
 * and the SpamAssassin corpus, and fast-check generated MIME structures, through preview in
 * the parse worker pool (per-message time and heap budgets), then mutated mbox files, maildirs
 * and Outlook .msg files through the files adapter's reader and the pool. Every case must end
 * in a document or a coded error within its budget; a parser failure (MIME_INTERNAL), a worker
 * crash, a budget overrun or an exception out of the reader is a finding, saved under
 * samples/fuzz/ named for what broke. Prints cases/s, the slowest case and the error codes.
 *
 * Options: --cases N (mutated mail, default 100000), --generated N (default 10000),
 * --files N (mutated files, default 3000), --seed N (default 1), --timeout-ms N (default 5000).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readInput } from '../adapters/files/read.js';
import { isGatewayError } from '../src/errors.js';
import { ParsePool } from '../src/pipeline/pool.js';
import { prng } from '../src/prng.js';
import { previewSync } from '../src/preview/index.js';
import { FINDING_CODES, generatedMessages, loadSeeds, mutate, mutateMsg, type Rand } from './support/fuzz-cases.js';

const args = process.argv.slice(2);
const argValue = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const v = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a non-negative integer`);
  return v;
};
const CASES = argValue('--cases', 100_000);
const GENERATED = argValue('--generated', 10_000);
const FILES = argValue('--files', 3000);
const SEED = argValue('--seed', 1);
const TIMEOUT_MS = argValue('--timeout-ms', 5000);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FUZZ_DIR = join(root, 'samples', 'fuzz');

const histogram = new Map<string, number>();
let cases = 0;
let findings = 0;
let slowest = { ms: 0, what: '' };
/**
 * The cases with the longest turnaround in the pool (which includes a short wait in its
 * queue): they are parsed again alone at the end, and the longest of those is the slowest case.
 */
const SLOW_CANDIDATES = 8;
let candidates: Array<{ ms: number; what: string; bytes: Buffer }> = [];

function record(code: string): void {
  histogram.set(code, (histogram.get(code) ?? 0) + 1);
}

function saveFinding(kind: string, code: string, bytes: Buffer, ext: string, note: string): void {
  findings++;
  mkdirSync(FUZZ_DIR, { recursive: true });
  const name = `${kind.replace(/[^a-z0-9]+/gi, '-')}-${code
    .replace(/^MAILGATE_ERR_/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')}-${createHash('sha256').update(bytes).digest('hex').slice(0, 10)}`;
  writeFileSync(join(FUZZ_DIR, `${name}.${ext}`), bytes);
  writeFileSync(join(FUZZ_DIR, `${name}.txt`), `${note}\n`);
  console.error(`finding: ${code} (${kind}) saved as samples/fuzz/${name}.${ext}`);
}

/** Submits to the pool and settles: every outcome is recorded, findings saved, the slowest kept. */
async function throughPool(pool: ParsePool, bytes: Buffer, kind: string, pending: Set<Promise<void>>): Promise<void> {
  const headers = cases % 5 === 0 ? 'parsed' : 'raw';
  const ticket = await pool.submit(bytes, { options: { headers } });
  const started = performance.now();
  const settled = ticket.done.then((outcome) => {
    const ms = performance.now() - started;
    if (outcome.ok && (candidates.length < SLOW_CANDIDATES || ms > candidates[candidates.length - 1]!.ms)) {
      candidates = [...candidates, { ms, what: `${kind}, ${bytes.length} bytes`, bytes }]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, SLOW_CANDIDATES);
    }
    cases++;
    const code = outcome.ok ? 'document' : outcome.error.code;
    record(code);
    if (!outcome.ok && FINDING_CODES.has(outcome.error.code)) saveFinding(kind, code, bytes, 'eml', outcome.error.message);
  });
  const p = settled.finally(() => pending.delete(p));
  pending.add(p);
}

async function mutatedMail(pool: ParsePool, seeds: Buffer[], rand: Rand): Promise<void> {
  const pending = new Set<Promise<void>>();
  for (let i = 0; i < CASES; i++) {
    const { bytes, mutator } = mutate(seeds[Math.floor(rand() * seeds.length)]!, rand, seeds[Math.floor(rand() * seeds.length)]!);
    await throughPool(pool, bytes, mutator, pending);
    if (i > 0 && i % 10_000 === 0) console.error(`  ${i} mutated messages…`);
  }
  await Promise.all(pending);
}

async function generated(pool: ParsePool): Promise<void> {
  const pending = new Set<Promise<void>>();
  for (let done = 0; done < GENERATED; done += 1000) {
    for (const m of generatedMessages(SEED * 1_000_003 + done, Math.min(1000, GENERATED - done)))
      await throughPool(pool, m, 'generated', pending);
  }
  await Promise.all(pending);
}

const fromLine = (i: number) => `From sender${i}@example.com Mon Jan  1 00:00:00 2024\n`;

/** Writes mutated mbox files, a maildir and mutated .msg files; returns the input folder. */
function writeFiles(seeds: Buffer[], rand: Rand): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-fuzz-'));
  const msgs = ['msg/properties.msg', 'msg/transport-headers.msg', 'hostile/directory-chain-loop.msg'].map((f) =>
    readFileSync(join(root, 'samples/files', f)),
  );
  mkdirSync(join(dir, 'box', 'cur'), { recursive: true });
  mkdirSync(join(dir, 'box', 'new'), { recursive: true });
  for (let i = 0; i < FILES; i++) {
    const kind = i % 3;
    const name = String(i).padStart(6, '0');
    if (kind === 0) writeFileSync(join(dir, `${name}.msg`), mutateMsg(msgs[i % msgs.length]!, rand));
    else if (kind === 1)
      writeFileSync(
        join(dir, 'box', i % 2 ? 'cur' : 'new', `${1700000000 + i}.M${i}.fuzz:2,S`),
        mutate(seeds[i % seeds.length]!, rand, seeds[(i * 7) % seeds.length]!).bytes,
      );
    else {
      const parts: Buffer[] = [];
      for (let k = 0; k < 1 + Math.floor(rand() * 8); k++) {
        const { bytes } = mutate(seeds[Math.floor(rand() * seeds.length)]!, rand, seeds[0]!);
        parts.push(Buffer.from(rand() < 0.1 ? `Fro${fromLine(k)}` : fromLine(k)), bytes, Buffer.from('\n'));
      }
      writeFileSync(join(dir, `${name}.mbox`), Buffer.concat(parts));
    }
  }
  return dir;
}

let slowestRead = { ms: 0, what: '' };

async function files(pool: ParsePool, seeds: Buffer[], rand: Rand): Promise<void> {
  const dir = writeFiles(seeds, rand);
  const pending = new Set<Promise<void>>();
  try {
    let last = performance.now();
    for await (const item of readInput(dir, { maxMessageBytes: 32 * 1024 * 1024 })) {
      const ms = performance.now() - last;
      if (ms > slowestRead.ms) slowestRead = { ms, what: item.origin.details['path'].split('/').pop()! };
      if (item.error) {
        cases++;
        record(item.error.code);
        if (!isGatewayError(item.error)) saveFinding('file-reader', 'uncoded', item.bytes ?? Buffer.alloc(0), 'bin', String(item.error));
      } else await throughPool(pool, item.raw, `file:${item.origin.details['path'].split('.').pop()}`, pending);
      last = performance.now();
    }
  } catch (err) {
    saveFinding('file-reader', 'exception', Buffer.from(String((err as Error).stack ?? err)), 'txt', 'readInput threw');
  } finally {
    await Promise.all(pending);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const seeds = loadSeeds(root);
  const rand = prng(SEED);
  console.log(`fuzz: ${seeds.length} seed messages, seed ${SEED}, ${TIMEOUT_MS} ms and 256 MiB per message`);
  const pool = new ParsePool({
    size: 2,
    batchSize: 1,
    queueSize: 4,
    timeoutMs: TIMEOUT_MS,
    workerMemoryMb: 256,
    maxMessageBytes: 32 * 1024 * 1024,
  });
  // Workers start before the clock does: the slowest case is a parse, not a thread start.
  await Promise.all([
    pool.parse(Buffer.from('From: a@example.com\n\nwarm-up\n')),
    pool.parse(Buffer.from('From: b@example.com\n\nwarm-up\n')),
  ]);
  const started = performance.now();
  try {
    const phases: Array<[string, () => Promise<void>]> = [
      ['mutated mail', () => mutatedMail(pool, seeds, rand)],
      ['generated structures', () => generated(pool)],
      ['files (mbox, maildir, .msg)', () => files(pool, seeds, rand)],
    ];
    for (const [name, run] of phases) {
      const before = cases;
      const t = performance.now();
      await run();
      console.log(`${name}: ${cases - before} cases in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
  } finally {
    await pool.close();
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`total: ${cases} cases in ${seconds.toFixed(1)} s, ${(cases / seconds).toFixed(0)} cases/s`);
  for (const c of candidates) {
    const t = performance.now();
    previewSync(c.bytes, { maxMessageBytes: 32 * 1024 * 1024 });
    const ms = performance.now() - t;
    if (ms > slowest.ms) slowest = { ms, what: c.what };
  }
  console.log(`slowest case: ${slowest.ms.toFixed(1)} ms to preview alone (${slowest.what})`);
  console.log(`slowest file item to read: ${slowestRead.ms.toFixed(1)} ms (${slowestRead.what})`);
  console.log('outcomes:');
  for (const [code, n] of [...histogram].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(8)}  ${code}`);
  console.log(findings === 0 ? 'findings: none' : `findings: ${findings} (saved under samples/fuzz/)`);
  process.exitCode = findings === 0 ? 0 : 1;
}

await main();
