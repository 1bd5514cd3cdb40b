/**
 * Folder (label) patterns: `/` separates levels whatever the server's own separator, `*`
 * matches one level (or part of one: `Old*`), `**` any number of levels, zero included.
 * Matching is case-sensitive except for INBOX, which IMAP names case-insensitively.
 */

function levelMatches(pattern: string, name: string): boolean {
  if (pattern === '*') return true;
  if (!pattern.includes('*')) return pattern === name;
  const re = new RegExp(`^${pattern.split('*').map(escape).join('[^/]*')}$`);
  return re.test(name);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function matchLevels(pattern: readonly string[], path: readonly string[]): boolean {
  if (pattern.length === 0) return path.length === 0;
  const [head, ...rest] = pattern;
  if (head === '**') {
    for (let i = 0; i <= path.length; i++) if (matchLevels(rest, path.slice(i))) return true;
    return false;
  }
  return path.length > 0 && levelMatches(head!, path[0]!) && matchLevels(rest, path.slice(1));
}

function levels(path: string, separator: string): string[] {
  const parts = path.split(separator);
  if (parts[0]!.toUpperCase() === 'INBOX') parts[0] = 'INBOX';
  return parts;
}

/** True when `path` (levels joined by `separator`) matches one of the patterns. */
export function folderMatches(patterns: readonly string[], path: string, separator = '/'): boolean {
  const target = levels(path, separator);
  return patterns.some((p) => matchLevels(levels(p, '/'), target));
}
