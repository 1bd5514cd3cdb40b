/**
 * The PST reader alone (no parsing): reads every item of a PST/OST and prints the item count,
 * the failures and the bytes rebuilt. `bench:pst` runs it under a small heap limit to show the
 * memory bound.
 */
import { readInputs } from '../../adapters/files/index.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: pst-read <file.pst> [worker heap MiB]');
// The reader runs in a worker: its heap is limited like the process's (the bound being shown).
const memoryMb = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
let items = 0;
let failed = 0;
let bytes = 0;
for await (const item of readInputs([file], memoryMb === undefined ? {} : { pstBudget: { memoryMb } })) {
  items++;
  if (item.error) failed++;
  else bytes += item.raw.length;
}
const heapMb = process.memoryUsage().heapUsed / 1e6;
console.log(`${items} items, ${failed} failed, ${(bytes / 1e6).toFixed(1)} MB rebuilt, heap at end ${heapMb.toFixed(1)} MB`);
