/**
 * PST benchmark (`npm run bench:pst [file.pst…]`): for each file (default: the largest PST and
 * OST shipped with the reader), in one run:
 *   1. `mailgate preview <file>` — msg/s, peak RSS;
 *   2. Debian's `readpst -e -t e` turning the same file into .eml files, then `mailgate preview`
 *      reading those — msg/s of both steps together, peak RSS of each;
 *   3. the reader alone under `--max-old-space-size=<--heap-mb, default 24>`, its worker's heap limited
 *      to the same: it must finish,
 *      and its peak RSS is printed (the memory bound);
 * then the message counts and the subjects (as multisets) of 1 and 2, which must agree.
 * Needs `readpst` (apt-get install pst-utils); without it, steps 2 and the comparison are skipped.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, type Dirent } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = join(root, 'dist', 'cli', 'mailgate.js');
const readerOnly = join(root, 'dist', 'bench', 'support', 'pst-read.js');
const args = process.argv.slice(2);
const heapAt = args.indexOf('--heap-mb');
const HEAP_MB = heapAt >= 0 ? Number(args[heapAt + 1]) : 24;
if (!Number.isInteger(HEAP_MB) || HEAP_MB < 8) throw new Error('--heap-mb must be an integer >= 8');
const files = args.filter((a, i) => !a.startsWith('--') && (heapAt < 0 || i !== heapAt + 1));
const testdata = join(dirname(createRequire(import.meta.url).resolve('pst-extractor/package.json')), 'example', 'testdata');
if (files.length === 0) files.push(join(testdata, 'enron.pst'), join(testdata, 'pstextractortest@outlook.com.ost'));

interface Timed {
  stdout: string;
  seconds: number;
  /** Peak resident set in MB, as GNU time reports it (%M, KiB). */
  peakMb: number;
  code: number | null;
}

/** Runs a command under /usr/bin/time for its peak RSS, with its stdout collected. */
function timed(cmd: string, argv: string[]): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', ['-f', 'PEAK_KB=%M', cmd, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const kb = Number(/PEAK_KB=(\d+)/.exec(err)?.[1] ?? NaN);
      resolve({ stdout: Buffer.concat(out).toString(), seconds: Number(process.hrtime.bigint() - started) / 1e9, peakMb: kb / 1024, code });
    });
  });
}

/** Subjects of the preview's JSONL lines (failed items as `ERROR <code>`). */
function subjects(jsonl: string): string[] {
  return jsonl
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { comment?: { messages: Array<{ subject?: { text: string } }> }; error?: { code: string } })
    .map((l) => (l.error ? `ERROR ${l.error.code}` : (l.comment?.messages[0]?.subject?.text ?? '')));
}

function difference(a: string[], b: string[]): string[] {
  const left = [...b];
  const out: string[] = [];
  for (const s of a) {
    const i = left.indexOf(s);
    if (i < 0) out.push(s);
    else left.splice(i, 1);
  }
  return out;
}

const fmt = (n: number, d = 1) => n.toFixed(d).padStart(8);
const haveReadpst = spawnSync('readpst', ['-V']).status === 0;

for (const file of files) {
  if (!existsSync(file)) throw new Error(`no such file: ${file}`);
  const mb = statSync(file).size / 1e6;
  console.log(`\n${file} (${mb.toFixed(1)} MB)`);
  const mine = await timed(process.execPath, [cli, 'preview', file, '--format', 'jsonl', '--workers', '1']);
  const ours = subjects(mine.stdout);
  console.log(
    `  mailgate preview <pst>            ${fmt(ours.length, 0)} msgs ${fmt(ours.length / mine.seconds)} msg/s  peak RSS ${fmt(mine.peakMb)} MB`,
  );
  const alone = await timed(process.execPath, [`--max-old-space-size=${HEAP_MB}`, readerOnly, file, String(HEAP_MB)]);
  const line = alone.stdout.trim();
  console.log(
    `  reader alone, --max-old-space-size=${HEAP_MB} ${alone.code === 0 ? 'finished' : `FAILED (exit ${alone.code})`}: ${line}, ${alone.seconds.toFixed(2)} s with start-up  peak RSS ${fmt(alone.peakMb)} MB`,
  );
  if (!haveReadpst) {
    console.log('  readpst not installed (apt-get install pst-utils): reference skipped');
    continue;
  }
  const out = mkdtempSync(join(tmpdir(), 'mailgate-readpst-'));
  try {
    const rp = await timed('readpst', ['-e', '-t', 'e', '-q', '-o', out, file]);
    const written = (readdirSync(out, { recursive: true, withFileTypes: true }) as Dirent[]).filter((d) => d.isFile()).length;
    const theirs = await timed(process.execPath, [cli, 'preview', out, '--format', 'jsonl', '--workers', '1']);
    const ref = subjects(theirs.stdout);
    const seconds = rp.seconds + theirs.seconds;
    console.log(
      `  readpst → ${written} .eml, mailgate preview ${fmt(ref.length, 0)} msgs ${fmt(ref.length / seconds)} msg/s  peak RSS ${fmt(rp.peakMb)} MB (readpst), ${fmt(theirs.peakMb)} MB (preview)`,
    );
    const missing = difference(ref, ours);
    const extra = difference(ours, ref);
    const agree = missing.length === 0 && extra.length === 0;
    console.log(`  counts ${ours.length} vs ${ref.length}; subjects ${agree ? 'agree' : 'DIFFER'}`);
    for (const s of missing) console.log(`    only readpst:  ${JSON.stringify(s)}`);
    for (const s of extra) console.log(`    only mailgate: ${JSON.stringify(s)}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
