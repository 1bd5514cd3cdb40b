/** The filter of `preview` and `import` made from their flags (filter.ts), and the messages it leaves out, counted by reason. */
import { compileFilter, type FilterReason, type MessageFilter } from '../controls/filter.js';
import type { FilterFlags } from './filter.js';

/** The filter the flags ask for; undefined when they ask for none. */
export function cliFilter(flags: FilterFlags): MessageFilter | undefined {
  const allow = flags.allow ?? [];
  const deny = flags.deny ?? [];
  const skip = flags.skip ?? [];
  if (allow.length === 0 && deny.length === 0 && skip.length === 0) return undefined;
  return compileFilter({ participants: { allow, deny }, skip, enabled: true, disable_after_ms: 0 });
}

/** Messages a filter left out, by reason. */
export class FilteredCount {
  readonly byReason: Partial<Record<FilterReason, number>> = {};
  total = 0;

  add(reason: FilterReason): void {
    this.total++;
    this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
  }

  /** `filtered 3 messages (participants 2, auto_reply 1)`, or '' when none. */
  text(): string {
    if (this.total === 0) return '';
    const reasons = Object.entries(this.byReason)
      .map(([r, n]) => `${r} ${n}`)
      .join(', ');
    return `filtered ${this.total} ${this.total === 1 ? 'message' : 'messages'} (${reasons})`;
  }
}

/** The items the filter keeps (items without bytes pass: they are failures to report); the others are counted. */
export async function* keptItems<T extends { raw?: Buffer }>(
  items: AsyncIterable<T>,
  filter: MessageFilter | undefined,
  count: FilteredCount,
): AsyncIterable<T> {
  for await (const item of items) {
    if (filter === undefined || item.raw === undefined) {
      yield item;
      continue;
    }
    const verdict = filter.judge(item.raw);
    if (verdict.keep) yield item;
    else count.add(verdict.reason);
  }
}
