/**
 * Message ids in References / In-Reply-To / Message-ID, returned bare (no angle brackets).
 * With brackets, every `<…>` is an id and text between them is ignored (In-Reply-To often
 * carries prose). Without brackets, whitespace- or comma-separated tokens holding `@` are
 * ids; a value that is one single token is an id as it stands.
 */

const BRACKETED_RE = /<([^<>]*)>/g;

export function parseMessageIds(value: string | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (id: string): void => {
    const t = id.replace(/\s+/g, '');
    if (t !== '' && !seen.has(t)) {
      seen.add(t);
      out.push(t);
    }
  };
  if (value.includes('<')) {
    for (const m of value.matchAll(BRACKETED_RE)) add(m[1]!);
    if (out.length > 0) return out;
  }
  const tokens = value
    .replace(/[<>]/g, ' ')
    .split(/[\s,]+/)
    .filter((t) => t !== '');
  if (tokens.length === 1) add(tokens[0]!);
  else for (const t of tokens) if (t.includes('@')) add(t);
  return out;
}
