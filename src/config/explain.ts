/**
 * Configuration errors that say the fix: an unknown field with the field it most likely means, a
 * value of the wrong type with what it must be and an example (the default, where there is one),
 * and the line and column of the setting in mailgate.yaml. zod's own words are kept only where
 * the schema wrote its own message.
 */
import type { Node } from 'yaml';
import { yaml } from './yaml.js';
import type { z } from 'zod';

type Path = ReadonlyArray<PropertyKey>;
/**
 * Where a setting was written: its line and column (1-based) in the file, or what set it over the
 * file (`from`: an environment variable, the command line); undefined when nothing names it (a default).
 */
export type Place = { line: number; col: number } | { from: string };
export type Locate = (path: Path, key?: boolean) => Place | undefined;

export function formatPath(path: Path): string {
  return path.length === 0
    ? '(root)'
    : path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
        .join('')
        .replace(/^\./, '');
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  getter?: () => z.ZodType;
  defaultValue?: unknown;
}
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The schemas a value at `path` may be checked by (several below a union), wrappers kept. */
function schemasAt(schema: z.ZodType, path: Path, depth = 0): z.ZodType[] {
  if (depth > 64) return [];
  const d = defOf(schema);
  switch (d.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return path.length === 0 ? [schema] : schemasAt(d.innerType!, path, depth + 1);
    case 'pipe':
      return path.length === 0 ? [schema] : schemasAt(d.in!, path, depth + 1);
    case 'lazy':
      return schemasAt(d.getter!(), path, depth + 1);
    case 'union':
      return (d.options ?? []).flatMap((o) => schemasAt(o, path, depth + 1));
    case 'intersection':
      return [...schemasAt(d.left!, path, depth + 1), ...schemasAt(d.right!, path, depth + 1)];
  }
  if (path.length === 0) return [schema];
  const [head, ...rest] = path;
  if (d.type === 'object' && typeof head === 'string' && d.shape && Object.hasOwn(d.shape, head))
    return schemasAt(d.shape[head]!, rest, depth + 1);
  if (d.type === 'array' && typeof head === 'number') return schemasAt(d.element!, rest, depth + 1);
  if (d.type === 'record' && typeof head === 'string') return schemasAt(d.valueType!, rest, depth + 1);
  return [];
}

/** The object shapes under wrappers (a union gives each of its options'). */
function shapesOf(schema: z.ZodType, depth = 0): Array<Record<string, z.ZodType>> {
  if (depth > 64) return [];
  const d = defOf(schema);
  if (d.type === 'object') return d.shape ? [d.shape] : [];
  const inner = d.innerType ?? d.in ?? (d.type === 'lazy' ? d.getter!() : undefined);
  if (inner) return shapesOf(inner, depth + 1);
  if (d.type === 'union') return (d.options ?? []).flatMap((o) => shapesOf(o, depth + 1));
  if (d.type === 'intersection') return [...shapesOf(d.left!, depth + 1), ...shapesOf(d.right!, depth + 1)];
  return [];
}

/** The first default declared on the way down the wrappers, if any. */
function defaultOf(schema: z.ZodType, depth = 0): { value: unknown } | undefined {
  if (depth > 64) return undefined;
  const d = defOf(schema);
  if (d.type === 'default' || d.type === 'prefault') {
    const v = typeof d.defaultValue === 'function' ? (d.defaultValue as () => unknown)() : d.defaultValue;
    return { value: v };
  }
  const inner = d.innerType ?? d.in;
  return inner ? defaultOf(inner, depth + 1) : undefined;
}

/** Edit distance (a swap of two neighbours, transfrom → transform, is one edit), for did-you-mean. */
export function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The known name closest to `name`, when it is close enough to be a typo. */
export function closest(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const lower = name.toLowerCase().replace(/-/g, '_');
  for (const k of known) {
    const d = k.toLowerCase() === lower ? 0 : distance(lower, k.toLowerCase());
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

function valueAt(input: unknown, path: Path): unknown {
  let v = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

const SAMPLES: Record<string, string> = {
  number: '10',
  int: '10',
  boolean: 'true',
  string: '"text"',
  array: '[ … ] (a list)',
  object: '{ … } (a mapping)',
};
const ARTICLE: Record<string, string> = {
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  string: 'text',
  array: 'a list',
  object: 'a mapping of settings',
};

function kindOf(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null (an empty value)';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `the text ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v === 'number' ? 'the number' : 'the value'} ${String(v)}`;
}

function example(key: string, expected: string, schemas: z.ZodType[]): string {
  const def = schemas.map((s) => defaultOf(s)).find((d) => d !== undefined);
  const scalar = def && (typeof def.value === 'number' || typeof def.value === 'boolean' || typeof def.value === 'string');
  if (scalar) return `for example ${key}: ${JSON.stringify(def.value)} (the default)`;
  const sample = SAMPLES[expected];
  return sample === undefined ? '' : `for example ${key}: ${sample}`;
}

export interface ExplainContext {
  schema: z.ZodType;
  /** The value that was checked (to say what was written). */
  input: unknown;
  /** Prefixed to every issue's path (when `schema` checks a part of the configuration). */
  at?: Array<string | number>;
  locate?: Locate;
}

function where(ctx: ExplainContext, path: Path, key = false): string {
  const p = ctx.locate?.([...(ctx.at ?? []), ...path], key);
  if (p === undefined) return '';
  return 'from' in p ? ` (from ${p.from})` : ` (line ${p.line}, column ${p.col})`;
}

/** One line per issue: the path, where it is in the file, what is wrong and how to fix it. */
export function explainIssue(issue: z.core.$ZodIssue, ctx: ExplainContext): string[] {
  const at = ctx.at ?? [];
  if (issue.code === 'unrecognized_keys') {
    const known = new Set(schemasAt(ctx.schema, issue.path).flatMap((s) => shapesOf(s).flatMap((sh) => Object.keys(sh))));
    return issue.keys.map((k) => {
      const path = [...issue.path, k];
      const guess = closest(k, known);
      const fix =
        guess !== undefined ? `did you mean "${guess}"?` : known.size ? `the fields here are ${[...known].sort().join(', ')}` : 'remove it';
      return `${formatPath([...at, ...path])}: unknown field "${k}"; ${fix}${where(ctx, path, true)}`;
    });
  }
  const name = formatPath([...at, ...issue.path]);
  const pos = where(ctx, issue.path);
  if (issue.code === 'invalid_type' && issue.message.startsWith('Invalid input')) {
    const expected = String(issue.expected);
    const got = valueAt(ctx.input, issue.path);
    const key = String([...at, ...issue.path].filter((p) => typeof p === 'string').at(-1) ?? 'value');
    if (got === undefined) return [`${name}: required (${ARTICLE[expected] ?? expected}) but not set${pos}`];
    // A secret put in the wrong place is not echoed.
    const shown = /token|pass|secret|key/i.test(key) && typeof got === 'string' ? 'text' : kindOf(got);
    const unquote = typeof got === 'string' && (expected === 'number' || expected === 'int') && /^-?\d+(\.\d+)?$/.test(got.trim());
    const fix = unquote ? `write it without quotes: ${key}: ${got.trim()}` : example(key, expected, schemasAt(ctx.schema, issue.path));
    return [`${name}: must be ${ARTICLE[expected] ?? expected}, not ${shown}${fix ? `; ${fix}` : ''}${pos}`];
  }
  return [`${name}: ${issue.message}${pos}`];
}

export function explainIssues(error: z.ZodError, ctx: ExplainContext): string {
  return error.issues.flatMap((i) => explainIssue(i, ctx)).join('\n');
}

/**
 * Where each setting of a YAML text is: the key's position (`key`) or its value's. The text is
 * parsed again only when there is an error to place.
 */
export function locator(text: string): Locate {
  const { isMap, isSeq, LineCounter, parseDocument } = yaml();
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: false });
  return (path, key = false) => {
    let node: unknown = doc.contents;
    let keyNode: unknown;
    for (const p of path) {
      if (isMap(node)) {
        const pair = node.items.find((it) => (it.key as { value?: unknown } | null)?.value === p);
        if (!pair) return undefined;
        keyNode = pair.key;
        node = pair.value;
      } else if (isSeq(node) && typeof p === 'number') {
        keyNode = undefined;
        node = node.items[p];
      } else return undefined;
    }
    const target = (key && keyNode ? keyNode : (node ?? keyNode)) as Node | undefined;
    const offset = target?.range?.[0];
    return offset === undefined ? undefined : counter.linePos(offset);
  };
}
