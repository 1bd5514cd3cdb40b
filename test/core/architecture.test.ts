/**
 * The layout rules of DESIGN.md, checked over every import (static, re-export and dynamic
 * `import()`) of src/ and adapters/: layers never reach up (src/layers.ts), src/ reaches a
 * concrete adapter only through the registry, adapters never import each other nor the
 * service, server or CLI, and the CLI has no import cycle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ADAPTER_KINDS } from '../../adapters/config.js';
import { ADAPTER_CEILING, LAYERS, layerOf } from '../../src/layers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

type Read = (file: string) => string;
const readRepo: Read = (file) => readFileSync(join(ROOT, file), 'utf8');

/** Repository-relative `.ts` paths of a file's relative imports (`dynamic: false`: static ones only). */
function importsOf(file: string, text: string, { dynamic = true } = {}): string[] {
  const specs = [
    ...text.matchAll(/\bfrom\s*'([^']+)'/g),
    ...(dynamic ? text.matchAll(/\bimport\s*\(\s*'([^']+)'\s*\)/g) : []),
    ...text.matchAll(/^\s*import\s*'([^']+)'/gm),
  ].map((m) => m[1]!);
  return [
    ...new Set(specs.filter((s) => s.startsWith('.')).map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)).replace(/\.js$/, '.ts'))),
  ];
}

const SRC = tsFiles('src');
const ADAPTERS = tsFiles('adapters');
const REGISTRY = new Set(['adapters/index.ts', 'adapters/config.ts', 'adapters/kinds.ts']);
const kindOf = (path: string): string | undefined => (path.startsWith('adapters/') && !REGISTRY.has(path) ? path.split('/')[1] : undefined);
const srcPart = (path: string): string | undefined => (path.startsWith('src/') ? path.slice('src/'.length) : undefined);

function violations(src: readonly string[], adapters: readonly string[], read: Read): string[] {
  const out: string[] = [];
  for (const file of src) {
    const from = layerOf(srcPart(file)!);
    if (from < 0) out.push(`${file}: in no layer of src/layers.ts`);
    for (const target of importsOf(file, read(file))) {
      if (kindOf(target) !== undefined)
        out.push(`${file} imports ${target}: src/ reaches adapters only through adapters/index.ts or adapters/config.ts`);
      const inner = srcPart(target);
      if (inner !== undefined && layerOf(inner) > from)
        out.push(`${file} (${LAYERS[from]![0]}) imports ${target} (${LAYERS[layerOf(inner)]![0]}): a lower layer reaches up`);
    }
  }
  const ceiling = LAYERS.findIndex((l) => l.includes(ADAPTER_CEILING));
  for (const file of adapters) {
    const own = kindOf(file);
    for (const target of importsOf(file, read(file))) {
      const other = kindOf(target);
      if (own !== undefined && REGISTRY.has(target)) out.push(`${file} imports the registry ${target}: adapters never import each other`);
      if (own !== undefined && other !== undefined && other !== own)
        out.push(`${file} imports ${target}: adapters never import each other`);
      const inner = srcPart(target);
      if (inner !== undefined && layerOf(inner) > ceiling)
        out.push(`${file} imports ${target}: adapters import src/ only up to ${ADAPTER_CEILING}`);
    }
  }
  out.push(...configSide(adapters, read));
  return out;
}

/**
 * The configuration reads adapters/config.ts: it, the list of kinds and the kinds' definitions
 * (kind.ts), schemas (config.ts) and codes (errors.ts) import only each other statically (an
 * implementation only through a loader, `() => import(...)`, so `mailgate --help` loads no IMAP
 * client) and src/ only up to the config layer.
 */
function configSide(adapters: readonly string[], read: Read): string[] {
  const out: string[] = [];
  // `config.ts` (or `<something>-config.ts`) at any depth of a kind's folder; a kind's `kind.ts`
  // (its definition) and `errors.ts` (its codes, read into the error catalogue).
  const isSchema = (path: string) =>
    path === 'adapters/config.ts' ||
    path === 'adapters/kinds.ts' ||
    /^adapters\/.+\/([a-z-]+-)?config\.ts$/.test(path) ||
    /^adapters\/[a-z-]+\/(kind|errors)\.ts$/.test(path);
  const ceiling = LAYERS.findIndex((l) => l.includes('config'));
  for (const file of adapters.filter(isSchema)) {
    for (const target of importsOf(file, read(file), { dynamic: false })) {
      const inner = srcPart(target);
      if (inner !== undefined && layerOf(inner) > ceiling)
        out.push(`${file} imports ${target}: the configuration side imports src/ only up to config`);
      if (target.startsWith('adapters/') && !isSchema(target)) out.push(`${file} imports ${target}: schemas only, never an implementation`);
    }
  }
  return out;
}

/** A file's imports that bring types only (`import type … from`, `export type … from`). */
function typeImportsOf(file: string, text: string): Set<string> {
  const specs = [...text.matchAll(/\b(?:import|export)\s+type\b[^;]*?\bfrom\s*'([^']+)'/g)].map((m) => m[1]!);
  return new Set(
    specs.filter((s) => s.startsWith('.')).map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)).replace(/\.js$/, '.ts')),
  );
}

/**
 * Every import cycle among the given files: the strongly connected components of the import
 * graph with more than one file (Tarjan), each sorted. `skip(from, to)` leaves an edge out.
 */
function cycles(files: readonly string[], read: Read, skip: (from: string, to: string) => boolean = () => false): string[][] {
  const inside = new Set(files);
  const graph = new Map(files.map((f) => [f, importsOf(f, read(f)).filter((t) => inside.has(t) && !skip(f, t))]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return found;
}

/**
 * Where src/ may still spell a kind's name, each with its reason: none of them picks a kind.
 * Anything else in code (comments aside) that quotes a kind's name, reads `adapters.<kind>` or
 * tests an origin for a kind's prefix makes the core know a kind.
 */
const KIND_WORDS_ALLOWED: Record<string, string> = {
  "src/cli/commands/upload.ts 'upload'": '`mailgate upload` is the command users type; it is a client over HTTP',
  'src/cli/commands/upload.ts adapters.upload': 'the help text of `mailgate upload --name`',
  "src/cli/commands/index.ts 'upload'": 'the name of `mailgate upload`, so that its module loads only when it runs',
  "src/pipeline/operation-doc.ts 'upload'": 'an OpenAPI tag and security scheme of the published document',
  "src/server/openapi/document.ts 'upload'": 'an OpenAPI tag of the published document',
  "src/server/page/preview.ts 'files'": 'the id of the file picker in the preview page',
  "src/service/defaults.ts 'files'": 'the folder samples/files of the package',
  "src/cli/skips.ts 'files'": 'the English plural of file',
};

function kindWords(files: readonly string[], kinds: readonly string[], read: Read): string[] {
  const any = kinds.join('|');
  // An origin's adapter may carry a prefix of the kind's name in the singular (`webhook:mailgun`).
  const prefixes = [...new Set(kinds.flatMap((k) => [k, k.replace(/s$/, '')]))].join('|');
  const word = new RegExp(`'(${any})'|\\badapters\\.(${any})\\b|'(${prefixes}):`, 'g');
  const out: string[] = [];
  for (const file of files.filter((f) => OTHER_ORIGINS[f] === undefined)) {
    const code = read(file)
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
    for (const m of code.matchAll(word)) if (KIND_WORDS_ALLOWED[`${file} ${m[0]}`] === undefined) out.push(`${file}: ${m[0]}`);
  }
  return [...new Set(out)];
}

/**
 * The fields an origin held before it became `{ adapter, instance, id, envelope?, details }`, and
 * any named read of `details`: the core stores and shows a kind's details, never interprets them.
 */
const OLD_ORIGIN_FIELDS = [
  'account',
  'folder',
  'uidValidity',
  'uid',
  'path',
  'index',
  'labels',
  'mailbox',
  'internetMessageId',
  'threadId',
  'eventId',
  'pushed',
];

/** Files whose `origin` is not a stored origin, with the reason. */
const OTHER_ORIGINS: Record<string, string> = {
  'src/cli/preview/table.ts': "the preview's output lines: their `origin` is the file and index of an input (OutputOrigin)",
};

/** `origin.folder`, `o.details.uid`, `origin.details['path']` in the code (comments left out) of `files`. */
function originReads(files: readonly string[], read: Read): string[] {
  const old = new RegExp(`\\b(?:origin|o)\\??\\.(?:${OLD_ORIGIN_FIELDS.join('|')})\\b`, 'g');
  const named = /\b(?:origin|o)\??\.details(?:\??\.[A-Za-z_$][\w$]*|(?:\?\.)?\[\s*['"`])/g;
  const out: string[] = [];
  for (const file of files.filter((f) => OTHER_ORIGINS[f] === undefined)) {
    const code = read(file)
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    for (const m of [...code.matchAll(old), ...code.matchAll(named)]) out.push(`${file}: ${m[0]}`);
  }
  return out;
}

describe('architecture', () => {
  it('reads the imports of both forms and of dynamic import()', () => {
    const text =
      "import { a } from '../x.js';\nexport { b } from './y.js';\nconst m = await import('../../adapters/imap/index.js');\nimport 'zod';";
    expect(importsOf('src/cli/z.ts', text)).toEqual(['src/x.ts', 'src/cli/y.ts', 'adapters/imap/index.ts']);
  });

  it('knows every folder and top-level module of src/', () => {
    expect(SRC.length).toBeGreaterThan(100);
    expect(SRC.filter((f) => layerOf(srcPart(f)!) < 0)).toEqual([]);
  });

  it('keeps the layers, the registry rule and the adapters apart', () => {
    expect(violations(SRC, ADAPTERS, readRepo)).toEqual([]);
  });

  it('keeps the ledger in one home: the store and intake never reach into the batcher', () => {
    const intake = ['src/pipeline/encoded.ts', 'src/pipeline/intake.ts', 'src/pipeline/pool.ts'];
    const found = [...SRC.filter((f) => f.startsWith('src/store/')), ...intake.filter((f) => SRC.includes(f))].flatMap((f) =>
      importsOf(f, readRepo(f))
        .filter((t) => t.startsWith('src/batcher/'))
        .map((t) => `${f} imports ${t}`),
    );
    expect(found).toEqual([]);
  });

  it('reports a reach-up, an adapter reached past the registry and adapters importing each other', () => {
    const files: Record<string, string> = {
      'src/store/x.ts': "import type { Origin } from '../pipeline/types.js';",
      'src/service/y.ts':
        "import { ImapAdapter } from '../../adapters/imap/index.js';\nimport { createAdapter } from '../../adapters/index.js';",
      'adapters/files/z.ts':
        "import { x } from '../imap/config.js';\nimport { y } from '../../src/service/index.js';\nimport { z } from '../../src/pipeline/types.js';",
    };
    const found = violations(['src/store/x.ts', 'src/service/y.ts'], ['adapters/files/z.ts'], (f) => files[f]!);
    expect(found).toHaveLength(4);
    const schemas: Record<string, string> = {
      'adapters/config.ts': "import { s } from './imap/index.js';",
      'adapters/imap/config.ts': "import type { Adapter } from '../../src/pipeline/types.js';",
    };
    expect(violations([], Object.keys(schemas), (f) => schemas[f]!)).toEqual([
      'adapters/config.ts imports adapters/imap/index.ts: schemas only, never an implementation',
      'adapters/imap/config.ts imports src/pipeline/types.ts: the configuration side imports src/ only up to config',
    ]);
    expect(found.join('\n')).toMatch(/src\/store\/x\.ts .* a lower layer reaches up/);
    expect(found.join('\n')).toMatch(/src\/service\/y\.ts imports adapters\/imap\/index\.ts/);
    expect(found.join('\n')).toMatch(/adapters\/files\/z\.ts imports adapters\/imap\/config\.ts/);
    expect(found.join('\n')).toMatch(/adapters\/files\/z\.ts imports src\/service\/index\.ts/);
  });

  it('finds an import cycle, a dynamic import included', () => {
    const files: Record<string, string> = {
      'src/cli/a.ts': "import { b } from './b.js';",
      'src/cli/b.ts': "const c = await import('./c.js');",
      'src/cli/c.ts': "export { a } from './a.js';",
      'src/cli/d.ts': "import { a } from './a.js';",
    };
    expect(cycles(Object.keys(files), (f) => files[f]!)).toEqual([['src/cli/a.ts', 'src/cli/b.ts', 'src/cli/c.ts']]);
    expect(
      cycles(
        Object.keys(files),
        (f) => files[f]!,
        (from, to) => from === 'src/cli/c.ts' && to === 'src/cli/a.ts',
      ),
    ).toEqual([]);
  });

  it('no file under src/ names a concrete kind: the core asks the registry for a capability', () => {
    expect(kindWords(SRC, ADAPTER_KINDS, readRepo)).toEqual([]);
  });

  it("reports a kind's name in the core's code, not in its comments", () => {
    const files: Record<string, string> = {
      'src/service/a.ts': "// adapters.imap is read by the kind\nconst x = config.adapters.imap;\nif (o.adapter === 'imap') go();",
      'src/server/b.ts': "/* 'webhooks' */ const p = o.adapter.startsWith('webhook:');",
    };
    expect(kindWords(Object.keys(files), ['imap', 'webhooks'], (f) => files[f]!)).toEqual([
      'src/service/a.ts: adapters.imap',
      "src/service/a.ts: 'imap'",
      "src/server/b.ts: 'webhook:",
    ]);
  });

  it("has no import cycle in src/ or adapters/ but the emulator's type-only ones", () => {
    const emulatorTypes = (from: string, to: string) =>
      from.startsWith('src/emulator/') && to.startsWith('src/emulator/') && typeImportsOf(from, readRepo(from)).has(to);
    // A kind's loaders (`load: () => import('./index.js')` in kind.ts) are the registry's lazy
    // edges to the implementation, taken when an entry starts, not imports of the definition.
    const loaders = (from: string, to: string) =>
      /^adapters\/[a-z-]+\/kind\.ts$/.test(from) && !importsOf(from, readRepo(from), { dynamic: false }).includes(to);
    const skip = (from: string, to: string) => emulatorTypes(from, to) || loaders(from, to);
    expect(cycles([...SRC, ...ADAPTERS], readRepo, skip).map((c) => c.join(' ⇄ '))).toEqual([]);
  });

  it('has no import cycle in src/cli', () => {
    expect(
      cycles(
        SRC.filter((f) => f.startsWith('src/cli/')),
        readRepo,
      ).map((c) => c.join(' → ')),
    ).toEqual([]);
  });
  it("no file under src/ reads a kind's field of an origin: the kind shows its details (showOrigin)", () => {
    expect(originReads(SRC, readRepo)).toEqual([]);
  });

  it("reports a read of an origin's old fields or of a named detail, not a comment", () => {
    const files: Record<string, string> = {
      'src/server/a.ts': "// origin.folder is the kind's\nconst f = item.origin.folder ?? o.uid;\nconst p = origin.details.path;",
      'src/cli/b.ts':
        "/* o.account */ const d = o.details['index']; const e = origin?.eventId; const ok = origin.instance + origin.details[name];",
    };
    expect(originReads(Object.keys(files), (f) => files[f]!)).toEqual([
      'src/server/a.ts: origin.folder',
      'src/server/a.ts: o.uid',
      'src/server/a.ts: origin.details.path',
      'src/cli/b.ts: origin?.eventId',
      "src/cli/b.ts: o.details['",
    ]);
  });
});
