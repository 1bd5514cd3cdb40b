/**
 * Message ids in References / In-Reply-To / Message-ID, returned bare (no angle brackets).
 * With brackets, every `<…>` is an id and text between them is ignored (In-Reply-To often
 * carries prose). Without brackets, whitespace- or comma-separated tokens holding `@` are
 * ids; a value that is one single token is an id as it stands.
 */
import { hasSpace } from './spaces.js';

/** Adds `id` (whitespace removed) to `out` unless empty or already there; `seen` indexes a long `out`. */
function addId(out: string[], seen: Set<string> | undefined, id: string): Set<string> | undefined {
  const t = hasSpace(id) ? id.replace(/\s+/g, '') : id;
  if (t === '') return seen;
  if (seen === undefined) {
    if (out.includes(t)) return seen;
    out.push(t);
    return out.length >= 8 ? new Set(out) : undefined;
  }
  if (!seen.has(t)) {
    seen.add(t);
    out.push(t);
  }
  return seen;
}

/**
 * Reads the bracketed ids of `value` into `out` (deduplicated), stopping once `out` holds
 * `limit` of them: every `<…>` holding neither `<` nor `>` (the regex /<([^<>]*)>/g, by
 * indexOf; the next `<` and `>` found are reused, so a run of `<` cannot make it quadratic).
 */
function bracketedIds(value: string, out: string[], limit: number): void {
  let seen: Set<string> | undefined;
  let lt = value.indexOf('<');
  let gt = -2;
  while (lt >= 0 && out.length < limit) {
    if (gt !== -1 && gt <= lt) gt = value.indexOf('>', lt + 1);
    if (gt < 0) break;
    const next = value.indexOf('<', lt + 1);
    if (next >= 0 && next < gt) {
      lt = next;
      continue;
    }
    seen = addId(out, seen, value.slice(lt + 1, gt));
    lt = next;
  }
}

export function parseMessageIds(value: string | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  bracketedIds(value, out, Infinity);
  return out.length > 0 ? out : unbracketedIds(value, out);
}

/**
 * `parseMessageIds(value)[0]`, without reading the ids after the first (a long References
 * field is read up to its first id).
 */
export function firstMessageId(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const out: string[] = [];
  bracketedIds(value, out, 1);
  return out.length > 0 ? out[0] : unbracketedIds(value, out)[0];
}

/** Without a bracketed id: the tokens holding `@` (see the module comment), into the empty `out`. */
function unbracketedIds(value: string, out: string[]): string[] {
  let seen: Set<string> | undefined;
  const tokens = value
    .replace(/[<>]/g, ' ')
    .split(/[\s,]+/)
    .filter((t) => t !== '');
  if (tokens.length === 1) addId(out, seen, tokens[0]!);
  else for (const t of tokens) if (t.includes('@')) seen = addId(out, seen, t);
  return out;
}
