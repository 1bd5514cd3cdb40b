/**
 * The participant and skip filters of a mailbox (src/controls/) as flags of `preview` and
 * `import`, so that an analyst sees what a filter would keep before turning it on: `--allow`
 * and `--deny` take addresses, `*@domain` or `domain` (comma-separated or repeated), `--skip`
 * takes auto_replies and mailing_lists. A message they leave out is never parsed nor billed,
 * and counted by reason at the end. The flags are declared here (what the help needs); the
 * filter they make, in filtered.ts (what a run needs).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { participantRule } from '../controls/participants.js';
import { SKIP_KINDS, type SkipKind } from '../controls/skip-kinds.js';

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
  const rule = participantRule(v);
  if (rule === undefined) throw new InvalidArgumentError(`"${v}": use an address (a@example.com), *@example.com or example.com`);
  return rule;
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
