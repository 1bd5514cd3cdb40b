/**
 * The participant and skip filters of a mailbox (src/controls/) as flags of `preview` and
 * `import`, so that an analyst sees what a filter would keep before turning it on: `--allow`
 * and `--deny` take addresses, `*@domain` or `domain` (comma-separated or repeated), `--skip`
 * takes auto_replies and mailing_lists. A message they leave out is never parsed nor billed,
 * and counted by reason at the end.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { compileFilter, type FilterReason, type MessageFilter } from '../controls/filter.js';
import { participantsSchema, SKIP_KINDS, type SkipKind } from '../controls/schema.js';

export interface FilterFlags {
  allow?: string[];
  deny?: string[];
  skip?: SkipKind[];
}

const list =
  <T extends string>(check: (v: string) => T) =>
  (value: string, prev: T[] = []): T[] => [
    ...prev,
    ...value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '')
      .map(check),
  ];

const participant = (v: string): string => {
  const r = participantsSchema.safeParse({ allow: [v] });
  if (!r.success) throw new InvalidArgumentError(`"${v}": use an address (a@example.com), *@example.com or example.com`);
  return r.data.allow[0]!;
};

const skipKind = (v: string): SkipKind => {
  if (!(SKIP_KINDS as readonly string[]).includes(v)) throw new InvalidArgumentError(`expected ${SKIP_KINDS.join(' or ')}`);
  return v as SkipKind;
};

export function filterOptions(cmd: Command): Command {
  return cmd
    .option(
      '--allow <participants>',
      'keep only mail with a participant (From/To/Cc) among these: a@x.com, *@x.com or x.com',
      list(participant),
    )
    .option('--deny <participants>', 'leave out mail with any participant (From/To/Cc) among these', list(participant))
    .option('--skip <kinds>', 'leave out auto_replies and/or mailing_lists', list(skipKind));
}

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
