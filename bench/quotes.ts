/**
 * Quote-removal benchmark (`npm run bench:quotes`): mailgate's `splitReply` beside npm `planer`
 * and `email-reply-parser`, on the same cases. Public suites are read from the npm packages
 * that ship them (never copied into this repository); mailgate's own multilingual cases are
 * scored in a separate table.
 *
 * - `parse-reply@0.0.4` (MIT): `test/files/<name>.input.txt` / `<name>.output.txt`.
 * - `planer@1.2.0` (MIT): `test/planerText.test.coffee`, the plain-text suite of Mailgun's
 *   talon ported to CoffeeScript; each `expect(planer.extractFromPlain(x)).to.equal(y)` is one case.
 * - `samples/quotes/*.txt`: mailgate's own cases (input, expected body, expected signature).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import EmailReplyParser from 'email-reply-parser';
import { splitReply } from '../src/preview/quotes.js';

export interface QuoteCase {
  suite: string;
  id: string;
  input: string;
  /** The expected reply text: quoted history removed (signature kept, as the public suites expect). */
  expected: string;
  /** For mailgate's own cases: the expected split. */
  body?: string;
  signature?: string;
}

const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

export function loadParseReplyCases(): QuoteCase[] {
  const dir = join(packageDir('parse-reply'), 'test', 'files');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.input.txt'))
    .sort()
    .map((f) => {
      const name = f.slice(0, -'.input.txt'.length);
      return {
        suite: 'parse-reply',
        id: `parse-reply/${name}`,
        input: readFileSync(join(dir, f), 'utf8'),
        expected: readFileSync(join(dir, `${name}.output.txt`), 'utf8'),
      };
    });
}

// --- a tiny reader for the string literals of planer's CoffeeScript test file -------------

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', f: '\f', v: '\v' };

function unescape(s: string): string {
  return s.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[\s\S])/g, (_, e: string) => {
    if (e.length > 1) return String.fromCharCode(parseInt(e.slice(1), 16));
    return ESCAPES[e] ?? e;
  });
}

/** CoffeeScript heredoc rules: drop a leading and a trailing blank line, remove the smallest indentation. */
function heredoc(body: string): string {
  let indent: string | undefined;
  for (const m of body.matchAll(/\n+([^\n\S]*)(?=\S)/g)) {
    const a = m[1]!;
    if (indent === undefined || (a.length > 0 && a.length < indent.length)) indent = a;
  }
  let v = body.replace(/^[^\n\S]*\n/, '').replace(/\n[^\n\S]*$/, '');
  if (indent) v = v.split(`\n${indent}`).join('\n');
  return unescape(v);
}

/** Reads a string literal starting at `src[i]`; returns its value and the index after it. */
function readLiteral(src: string, i: number): { value: string; end: number } | undefined {
  for (const q of ['"""', "'''", '"', "'"]) {
    if (!src.startsWith(q, i)) continue;
    let j = i + q.length;
    while (j < src.length && !src.startsWith(q, j)) j += src[j] === '\\' ? 2 : 1;
    const raw = src.slice(i + q.length, j);
    return { value: q.length === 3 ? heredoc(raw) : unescape(raw), end: j + q.length };
  }
  return undefined;
}

export function loadPlanerCases(): QuoteCase[] {
  const src = readFileSync(join(packageDir('planer'), 'test', 'planerText.test.coffee'), 'utf8');
  const cases: QuoteCase[] = [];
  const blocks = src.split(/\n {2}it '/).slice(1);
  for (const block of blocks) {
    const title = block.slice(0, block.indexOf("'"));
    const vars = new Map<string, string>();
    let skip = false;
    let n = 0;
    const stmt = /(\w+) ?= ?(?=["'])|(\w+) \+= |expect\(planer\.extractFromPlain\((\w+)\)\)\.to\.equal\(/g;
    for (let m = stmt.exec(block); m; m = stmt.exec(block)) {
      const at = m.index + m[0].length;
      if (m[1]) {
        const lit = readLiteral(block, at);
        if (lit) vars.set(m[1], lit.value);
        if (lit) stmt.lastIndex = lit.end;
      } else if (m[2]) {
        skip = true; // a generated message (the speed test); it has no expected output
      } else if (m[3] && !skip) {
        const lit = readLiteral(block, at);
        const ref = /^(\w+)\)/.exec(block.slice(at));
        const expected = lit ? lit.value : ref ? vars.get(ref[1]!) : undefined;
        const input = vars.get(m[3]);
        if (expected !== undefined && input !== undefined) {
          n += 1;
          const id = `planer/${String(cases.length + 1).padStart(2, '0')} ${title}${n > 1 ? ` #${n}` : ''}`;
          cases.push({ suite: 'planer', id, input, expected });
        }
        if (lit) stmt.lastIndex = lit.end;
      }
    }
  }
  return cases;
}

// --- mailgate's own cases ------------------------------------------------------------------

const BODY_MARK = '#### expected body ####';
const SIG_MARK = '#### expected signature ####';

/** Parses one `samples/quotes/*.txt` case: input, then the expected body, then optionally the signature. */
export function parseOwnCase(id: string, text: string): QuoteCase {
  const b = text.indexOf(`\n${BODY_MARK}\n`);
  if (b < 0) throw new Error(`${id}: missing "${BODY_MARK}" line`);
  const input = text.slice(0, b);
  const rest = text.slice(b + BODY_MARK.length + 2);
  const s = rest.indexOf(`${SIG_MARK}\n`);
  const body = (s < 0 ? rest : rest.slice(0, s)).replace(/\n$/, '');
  const signature = s < 0 ? undefined : rest.slice(s + SIG_MARK.length + 1).replace(/\n$/, '');
  const expected = signature === undefined ? body : `${body}\n${signature}`;
  return { suite: 'mailgate', id: `mailgate/${id}`, input, expected, body, ...(signature === undefined ? {} : { signature }) };
}

export function loadOwnCases(dir: string): QuoteCase[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .sort()
    .map((f) => parseOwnCase(f.slice(0, -4), readFileSync(join(dir, f), 'utf8')));
}

/** Deterministic halves: within each suite, even positions tune, odd positions are held out. */
export function half(cases: QuoteCase[], which: 'tune' | 'held-out'): QuoteCase[] {
  const pos = new Map<string, number>();
  return cases.filter((c) => {
    const i = pos.get(c.suite) ?? 0;
    pos.set(c.suite, i + 1);
    return (i % 2 === 0) === (which === 'tune');
  });
}

// --- scoring -------------------------------------------------------------------------------

/** Whitespace normalisation: LF line breaks, no trailing whitespace, no blank lines. */
export function normalise(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.replace(/[ \t\u00a0]+$/, ''))
    .filter((l) => l.trim() !== '')
    .join('\n');
}

function lineF1(got: string, want: string): number {
  const g = normalise(got)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const w = normalise(want)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (g.length === 0 && w.length === 0) return 1;
  const pool = new Map<string, number>();
  for (const l of w) pool.set(l, (pool.get(l) ?? 0) + 1);
  let hit = 0;
  for (const l of g) {
    const n = pool.get(l) ?? 0;
    if (n > 0) {
      hit += 1;
      pool.set(l, n - 1);
    }
  }
  if (hit === 0) return 0;
  const p = hit / g.length;
  const r = hit / w.length;
  return (2 * p * r) / (p + r);
}

type Extractor = (text: string) => string;

interface Contender {
  name: string;
  run: Extractor;
}

function contenders(): Contender[] {
  const planer = require('planer') as { extractFrom(text: string, type: string): string };
  const erp = new EmailReplyParser();
  return [
    {
      name: 'mailgate splitReply',
      run: (t) => {
        const r = splitReply(t);
        return r.signature === undefined ? r.body : `${r.body}\n${r.signature}`;
      },
    },
    { name: 'planer 1.2.0', run: (t) => planer.extractFrom(t, 'text/plain') },
    { name: 'email-reply-parser 2.3.9', run: (t) => erp.parseReply(t) },
  ];
}

interface Score {
  exact: number;
  f1: number;
  n: number;
  misses: string[];
}

function score(run: Extractor, cases: QuoteCase[]): Score {
  let exact = 0;
  let f1 = 0;
  const misses: string[] = [];
  for (const c of cases) {
    let got: string;
    try {
      got = run(c.input);
    } catch {
      got = '';
    }
    // Where a case also gives the body alone, a contender that hides the signature too
    // (email-reply-parser does) is not penalised for it.
    const wants = c.body === undefined ? [c.expected] : [c.expected, c.body];
    if (wants.some((w) => normalise(got) === normalise(w))) exact += 1;
    else misses.push(c.id);
    f1 += Math.max(...wants.map((w) => lineF1(got, w)));
  }
  return { exact, f1: cases.length === 0 ? 0 : f1 / cases.length, n: cases.length, misses };
}

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

/** One table: a row per contender, an "exact | line F1" column pair per case set. */
function table(sets: Array<[string, QuoteCase[]]>, all: Contender[], verbose: boolean): void {
  const head = ['contender', ...sets.flatMap(([name, cs]) => [`${name} (n=${cs.length}) exact`, 'line F1'])];
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  const misses: string[] = [];
  for (const c of all) {
    const cells = sets.map(([, cs]) => {
      const s = score(c.run, cs);
      return `${s.exact}/${s.n} (${pct(s.exact / Math.max(1, s.n))}) | ${s.f1.toFixed(3)}`;
    });
    console.log(`| ${c.name} | ${cells.join(' | ')} |`);
    for (const [name, cs] of sets.filter(([n]) => n.endsWith('all'))) {
      for (const m of score(c.run, cs).misses) misses.push(`  ${c.name} misses (${name}): ${m}`);
    }
  }
  if (verbose) console.log(misses.join('\n'));
}

/** For cases that give the expected split: body and signature both exact (after normalisation). */
function splitScore(cases: QuoteCase[]): string {
  const withSplit = cases.filter((c) => c.body !== undefined);
  let ok = 0;
  for (const c of withSplit) {
    const r = splitReply(c.input);
    if (normalise(r.body) === normalise(c.body!) && normalise(r.signature ?? '') === normalise(c.signature ?? '')) ok += 1;
  }
  return `${ok}/${withSplit.length}`;
}

/** Mean microseconds per message over `rounds` passes (after ten warm-up passes). */
function speed(run: Extractor, cases: QuoteCase[], rounds = 50): number {
  for (let r = 0; r < 10; r++) for (const c of cases) run(c.input);
  const t = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) for (const c of cases) run(c.input);
  return Number(process.hrtime.bigint() - t) / 1000 / (rounds * cases.length);
}

function main(): void {
  const verbose = process.argv.includes('--verbose');
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const pub = [...loadParseReplyCases(), ...loadPlanerCases()];
  const own = loadOwnCases(join(root, 'samples', 'quotes'));
  const all = contenders();
  console.log('Quote removal: exact match of the reply text after whitespace normalisation, and mean line-level F1.');
  console.log('public = parse-reply 0.0.4 test/files + planer 1.2.0 test/planerText.test.coffee (read from node_modules);');
  console.log('own = samples/quotes, written for mailgate in six languages (not a neutral suite).\n');
  table(
    [
      ['public tuning half', half(pub, 'tune')],
      ['public held-out half', half(pub, 'held-out')],
      ['public all', pub],
      ['own tuning half', half(own, 'tune')],
      ['own held-out half', half(own, 'held-out')],
      ['own all', own],
    ],
    all,
    verbose,
  );
  console.log(
    `\nmailgate body/signature split, both exact (own cases): tuning ${splitScore(half(own, 'tune'))}, held-out ${splitScore(half(own, 'held-out'))}, all ${splitScore(own)}`,
  );
  console.log('\nSpeed on the same cases (all suites, 50 rounds after 10 warm-up rounds, one core):');
  for (const c of all) console.log(`  ${c.name}: ${speed(c.run, [...pub, ...own]).toFixed(1)} µs per message`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
