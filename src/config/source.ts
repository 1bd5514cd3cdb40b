/**
 * A mailgate.yaml as written: read, its YAML parsed with errors that name the line and never quote
 * it, and its `${VAR}` placeholders replaced. No schema here: a command that reads one setting
 * (the store of `status`) reads it without building the configuration schema.
 */
import { readFileSync } from 'node:fs';
import { GatewayError } from '../errors.js';
import { formatPath, locator, type Locate } from './explain.js';
import { yaml } from './yaml.js';

export type Env = Record<string, string | undefined>;
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

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
