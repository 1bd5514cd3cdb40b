/**
 * What grew between two V8 heap snapshots, by constructor: count and self size of each node kind
 * in A and in B, sorted by the growth of self size. Used with `bench:soak --snapshot-minutes`.
 *
 *   node dist/bench/support/heap-diff.js A.heapsnapshot B.heapsnapshot [--top 40]
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Count and self size per "type:name" (strings and code grouped by type only). */
export function tally(file: string): Map<string, { count: number; size: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const iType = fields.indexOf('type');
  const iName = fields.indexOf('name');
  const iSize = fields.indexOf('self_size');
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + iType]!]!;
    const named = type === 'object' || type === 'closure' || type === 'native';
    const key = named ? `${type}:${snap.strings[snap.nodes[i + iName]!]!.slice(0, 80)}` : type;
    const row = out.get(key) ?? { count: 0, size: 0 };
    row.count += 1;
    row.size += snap.nodes[i + iSize]!;
    out.set(key, row);
  }
  return out;
}

function main(): void {
  const [a, b] = process.argv.slice(2).filter((x) => !x.startsWith('--'));
  if (a === undefined || b === undefined) throw new Error('usage: heap-diff A.heapsnapshot B.heapsnapshot [--top N]');
  const i = process.argv.indexOf('--top');
  const top = i < 0 ? 40 : Number(process.argv[i + 1]);
  const ta = tally(a);
  const tb = tally(b);
  const keys = new Set([...ta.keys(), ...tb.keys()]);
  const rows = [...keys].map((k) => {
    const x = ta.get(k) ?? { count: 0, size: 0 };
    const y = tb.get(k) ?? { count: 0, size: 0 };
    return { k, dc: y.count - x.count, ds: y.size - x.size, c: y.count, s: y.size };
  });
  rows.sort((p, q) => q.ds - p.ds);
  const total = (t: Map<string, { size: number }>) => [...t.values()].reduce((n, r) => n + r.size, 0) / 1024 / 1024;
  console.log(`self size: A ${total(ta).toFixed(2)} MiB, B ${total(tb).toFixed(2)} MiB`);
  console.log('growth of self size (bytes)  growth of count  count in B  kind');
  for (const r of rows.slice(0, top))
    console.log(`${String(r.ds).padStart(12)}  ${String(r.dc).padStart(10)}  ${String(r.c).padStart(10)}  ${r.k}`);
}

if (process.argv[1]?.endsWith('heap-diff.js')) main();
