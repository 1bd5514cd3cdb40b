/**
 * Configuration is read once: defaults < file < environment < flags, validated strictly,
 * then frozen. Nothing else in mailgate reads process.env.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { explainIssues, formatPath, locator, type Locate } from './explain.js';
import { yaml } from './yaml.js';
import { ConfigSchema, type Config } from './schema.js';

type Env = Record<string, string | undefined>;
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Environment variables that set a configuration field directly (after the file, before flags). */
export const ENV_FIELDS: Record<string, string[]> = {
  MAILGATE_STORE: ['store'],
  MAILGATE_API_URL: ['api', 'url'],
  MAILGATE_API_TOKEN: ['api', 'token'],
  MAILGATE_LISTEN: ['server', 'listen'],
  MAILGATE_LOG_LEVEL: ['log_level'],
  MAILGATE_LOG_FORMAT: ['log_format'],
};

const PLACEHOLDER = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

const TOKEN_PREFIX = 'mailgate_env_placeholder_';
const TOKEN = new RegExp(`${TOKEN_PREFIX}(\\d+)_`, 'g');

/** Puts the placeholders hidden from the YAML parser back into every string. */
function unshield(value: unknown, held: string[]): unknown {
  if (typeof value === 'string') return value.replace(TOKEN, (_, i: string) => held[Number(i)]!);
  if (Array.isArray(value)) return value.map((v) => unshield(v, held));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unshield(v, held)]));
  return value;
}

/**
 * Replaces `${VAR}` and `${VAR:-default}` in every string; `$$` stands for a literal `$`. Every
 * variable that is not set is named in one error (with its path), not one per run.
 */
export function interpolate(value: Json, env: Env, path: Array<string | number> = []): Json {
  const missing: Array<{ path: string; name: string }> = [];
  const out = substitute(value, env, path, missing);
  if (missing.length > 0) {
    const lines = missing.map((m) => `${m.path}: environment variable ${m.name} is not set; export it or write \${${m.name}:-default}`);
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_ENV_MISSING',
      lines.length === 1 ? lines[0]! : `${lines.length} environment variables are not set:\n${lines.join('\n')}`,
      { details: { missing: missing.map((m) => m.name) } },
    );
  }
  return out;
}

function substitute(value: Json, env: Env, path: Array<string | number>, missing: Array<{ path: string; name: string }>): Json {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (whole, name: string | undefined, fallback: string | undefined) => {
      if (whole === '$$') return '$';
      const v = env[name!];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      missing.push({ path: formatPath(path), name: name! });
      return whole;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, env, [...path, i], missing));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, env, [...path, k], missing)]));
  }
  return value;
}

function setPath(target: Record<string, Json>, path: string[], value: Json): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (!next || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, Json>;
  }
  node[path[path.length - 1]!] = value;
}

/** `over` on top of `base`, section by section: a setting of `over` replaces that setting only, never a whole section. */
export function deepMerge(base: Record<string, Json>, over: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Record<string, Json>, v as Record<string, Json>)
        : v;
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** What a YAML error code means, in words that say the fix (the parser's own text may quote a secret). */
const YAML_HINTS: Record<string, string> = {
  BAD_INDENT: 'wrong indentation: line it up with the settings it belongs to (spaces only)',
  BLOCK_AS_IMPLICIT_KEY: 'this line is indented deeper than the setting above it: line it up with its siblings',
  TAB_AS_INDENT: 'a tab in the indentation: indent with spaces',
  DUPLICATE_KEY: 'this setting is given twice in the same mapping: keep one',
  MULTILINE_IMPLICIT_KEY: 'a setting without its colon, or a value that runs on to the next line: write `name: value`',
  MISSING_CHAR: 'a missing character: a list item without its "- ", a quote or bracket left open',
  UNEXPECTED_TOKEN: 'a character YAML does not expect here',
  BAD_SCALAR_START: 'a value that cannot start with this character: quote it',
  BLOCK_IN_FLOW: 'a block inside { } or [ ]: write it on one line or drop the brackets',
  MISSING_ANCHOR: 'an alias (*name) without its anchor (&name) above it',
};

/** The 1-based line of the next line after `line` that is neither blank nor a comment. */
function nextContentLine(text: string, line: number): number | undefined {
  const lines = text.split(/\r?\n/);
  for (let i = line; i < lines.length; i++) if (!/^\s*(#.*)?$/.test(lines[i]!)) return i + 1;
  return undefined;
}

/**
 * Where and what a YAML syntax error is, without the text of the line: `line 3, column 9:
 * a missing character: … (MISSING_CHAR)`. The column counts a `${VAR}` placeholder on that line
 * as the token it is swapped for while parsing. An over-indented line is reported by the parser
 * at the line above it (where the mapping it would nest in starts): named as the line itself.
 */
export function yamlErrorWhere(err: unknown, text?: string): string {
  const e = err as { code?: unknown; linePos?: Array<{ line: number; col: number }> };
  const code = typeof e.code === 'string' && /^[A-Z_]+$/.test(e.code) ? e.code : undefined;
  const hint = code === undefined ? undefined : YAML_HINTS[code];
  const kind = code === undefined ? 'syntax error' : `${hint ?? code.toLowerCase().replace(/_/g, ' ')} (${code})`;
  let at = e.linePos?.[0];
  if (at !== undefined && code === 'BLOCK_AS_IMPLICIT_KEY' && text !== undefined) {
    const line = nextContentLine(text, at.line);
    if (line !== undefined) at = { line, col: (/^\s*/.exec(text.split(/\r?\n/)[line - 1]!)?.[0].length ?? 0) + 1 };
  }
  return at === undefined ? kind : `line ${at.line}, column ${at.col}: ${kind}`;
}

export interface LoadOptions {
  /** Path of mailgate.yaml; omitted: embedded defaults only. */
  file?: string;
  env?: Env;
  /** Values from command-line flags, highest precedence. */
  overrides?: Record<string, Json>;
  /** Settings in place of a file (`mailgate serve`'s embedded defaults), below the environment and the flags; ignored with `file`. */
  settings?: Record<string, Json>;
}

/** Turns zod issues into one message that names each path and what to do. */
export function describeIssues(error: z.ZodError, at: Array<string | number> = [], input?: unknown, locate?: Locate): string {
  return explainIssues(error, { schema: at.length === 0 ? ConfigSchema : ConfigSchema.shape.store, input, at, ...(locate && { locate }) });
}

/** A mailgate.yaml as read: its settings (placeholders not yet replaced) and where each one is written. */
export interface ConfigSource {
  settings: Record<string, Json>;
  /** Line and column of a setting; the file is parsed again for it only when an error is reported. */
  locate: Locate;
}

/**
 * The settings of a mailgate.yaml as written, `${VAR}` placeholders not yet replaced (so that a
 * caller can resolve only the settings it needs, and the variables only those use).
 */
export function readConfigFile(file: string): Record<string, Json> {
  return readConfigSource(file).settings;
}

export function readConfigSource(file: string): ConfigSource {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `cannot read configuration file ${file}: ${(cause as Error).message}`, {
      cause,
    });
  }
  // Placeholders are swapped for plain tokens before YAML sees them, so that the unquoted
  // form `{ token: ${MAILGATE_API_TOKEN} }` parses like the quoted one.
  const held: string[] = [];
  const shielded = text.replace(PLACEHOLDER, (whole) => (whole === '$$' ? whole : `${TOKEN_PREFIX}${held.push(whole) - 1}_`));
  let doc: unknown;
  try {
    doc = unshield(yaml().parse(shielded), held);
  } catch (cause) {
    // No cause and no message text from the parser: both quote the offending line, which may hold a secret.
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `${file} is not valid YAML: ${yamlErrorWhere(cause, shielded)}`);
  }
  if (doc !== null && doc !== undefined && (typeof doc !== 'object' || Array.isArray(doc))) {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `${file}: the top level must be a mapping of settings`);
  }
  let located: Locate | undefined;
  const locate: Locate = (path, key) => (located ??= locator(shielded))(path, key);
  return { settings: (doc ?? {}) as Record<string, Json>, locate };
}

/**
 * Only the store URL, with the same precedence as loadConfig (default < file < MAILGATE_STORE <
 * flag), reading nothing else: the commands that only read the store (`status`, `dlq`,
 * `predictions`) need neither the API token nor the adapters' secrets.
 */
export function loadStoreUrl(options: LoadOptions = {}): string {
  const env = options.env ?? {};
  const flag = options.overrides?.['store'];
  if (typeof flag === 'string') return flag;
  const fromEnv = env['MAILGATE_STORE'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const source = options.file === undefined ? undefined : readConfigSource(options.file);
  const written = source?.settings['store'];
  const store = written === undefined ? undefined : interpolate(written, env, ['store']);
  const result = ConfigSchema.shape.store.safeParse(store);
  if (!result.success) {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `${options.file ?? 'configuration'} is invalid:\n${describeIssues(result.error, ['store'], store, source?.locate)}`,
    );
  }
  return result.data;
}

/** What sets values over the file, the highest precedence first: the command line, then each variable of ENV_FIELDS. */
function overLayers(env: Env, overrides: Record<string, Json>): Array<{ from: string; values: Record<string, Json> }> {
  const layers = [{ from: 'the command line', values: overrides }];
  for (const [name, path] of Object.entries(ENV_FIELDS)) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    const values: Record<string, Json> = {};
    setPath(values, path, v);
    layers.push({ from: name, values });
  }
  return layers;
}

const isMapping = (v: Json | undefined): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether `layer` gives the setting at `path` its whole value: it holds a value or a list there,
 * or replaces a part of the path whole (a list, such as the routes of the command line). A
 * section it only adds to (merged with the file's) is not its own.
 */
function sets(layer: Record<string, Json>, path: ReadonlyArray<PropertyKey>): boolean {
  let node: Json | undefined = layer;
  for (const p of path) {
    if (!isMapping(node)) return true;
    node = typeof p === 'string' ? node[p] : undefined;
    if (node === undefined) return false;
  }
  return !isMapping(node);
}

export function loadConfig(options: LoadOptions = {}): Readonly<Config> {
  const env = options.env ?? {};
  const source = options.file === undefined ? undefined : readConfigSource(options.file);
  const fromFile = source === undefined ? (options.settings ?? {}) : (interpolate(source.settings, env) as Record<string, Json>);
  const fromEnv: Record<string, Json> = {};
  for (const [name, path] of Object.entries(ENV_FIELDS)) {
    const v = env[name];
    if (v !== undefined && v !== '') setPath(fromEnv, path, v);
  }
  const merged = deepMerge(deepMerge(fromFile, fromEnv), options.overrides ?? {});
  // Parsed once per process: zod's compiled fast path for objects would cost more to build than it saves.
  const result = ConfigSchema.safeParse(merged, { jitless: true });
  if (!result.success) {
    const where = options.file ?? 'configuration';
    const over = overLayers(env, options.overrides ?? {});
    const locate: Locate = (path, key) => {
      const from = over.find((layer) => sets(layer.values, path));
      return from === undefined ? source?.locate(path, key) : { from: from.from };
    };
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `${where} is invalid:\n${describeIssues(result.error, [], merged, locate)}`);
  }
  return deepFreeze(result.data);
}
