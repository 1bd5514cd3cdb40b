/** Formatting of times, sizes and counts for display (the ISO value stays in a title attribute). */

/** `2026-03-03 10:15:00 UTC`; the empty string for a missing time. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, ' UTC');
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A datetime-local input's value (local time, no zone) as an ISO instant; undefined when empty or invalid. */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** An ISO instant as a datetime-local value. */
export function isoToLocal(iso: string | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A span of seconds for people: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h` (two units at most). */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const units: Array<[number, string]> = [
    [86_400, 'd'],
    [3_600, 'h'],
    [60, 'min'],
  ];
  const parts: string[] = [];
  let rest = s;
  for (const [size, name] of units) {
    const n = Math.floor(rest / size);
    if (n > 0 || parts.length > 0) parts.push(`${n} ${name}`);
    rest -= n * size;
    if (parts.length === 2) break;
  }
  return parts.filter((p) => !p.startsWith('0 ')).join(' ');
}

/** How long ago an instant was: `5 min ago`; `just now` under a second. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '';
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return '';
  const s = (now - t) / 1000;
  return s < 1 ? 'just now' : `${duration(s)} ago`;
}
