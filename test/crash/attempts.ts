/**
 * The parse attempts a SQLite store holds for the keys `match` accepts, as a restart would count
 * them: the attempts table's rows plus the net lines of every process's attempts journal beside
 * the file (src/store/sqlite/attempts-journal.ts). The most of any key (0 before the first).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export async function mostAttempts(file: string, match: (route: string, key: string) => boolean = () => true): Promise<number> {
  const counts = new Map<string, number>();
  const add = (route: string, key: string, n: number) => {
    if (match(route, key)) counts.set(`${route}\0${key}`, (counts.get(`${route}\0${key}`) ?? 0) + n);
  };
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    for (const r of db.prepare('SELECT route, key, attempts FROM parse_attempts').all() as Array<{
      route: string;
      key: string;
      attempts: number;
    }>)
      add(r.route, r.key, r.attempts);
  } finally {
    db.close();
  }
  const prefix = `${basename(file)}-attempts-`;
  for (const name of readdirSync(dirname(file))) {
    if (!name.startsWith(prefix) || name.endsWith('.compact') || name.endsWith('.lock')) continue;
    let text: string;
    try {
      text = readFileSync(join(dirname(file), name), 'utf8');
    } catch {
      continue; // moved into the table meanwhile
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const [sign, route, key] = JSON.parse(line) as [string, string, string];
      add(route, key, sign === '+' ? 1 : -1);
    }
  }
  return Math.max(0, ...counts.values());
}
