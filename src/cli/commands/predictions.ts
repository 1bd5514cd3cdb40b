/** `mailgate predictions list`: the predictions predict routes stored (docs/predictions.md). */
import type { Command } from 'commander';
import type { PredictionRecord } from '../../sinks/outputs.js';
import type { StoreFlags } from '../store.js';
import { integerOption } from '../options.js';
import type { CliCommand, CliContext } from '../types.js';
import { writerFor } from '../write.js';
import { DEFAULT_STORE_URL } from '../../config/defaults.js';

interface ListFlags extends StoreFlags {
  route?: string;
  limit: number;
  after?: number;
  json?: boolean;
}

/** `Parent > Child`; the client stores paths, but a name may be a string (notes §3.2), e.g. in rows stored before it normalised them. */
export function labelName(name: unknown): string {
  return Array.isArray(name) ? name.map(String).join(' > ') : String(name);
}

function labels(p: PredictionRecord): string {
  if (p.predictions.length === 0) return '-';
  return p.predictions.map((l) => `${labelName(l.name)} (${l.probability.toFixed(2)})`).join(', ');
}

function line(p: PredictionRecord): string {
  return `${p.id}\t${p.route}\t${p.created_at}\t${p.comment_id}\t${p.model === null ? '-' : p.model.version}\t${labels(p)}`;
}

async function list(flags: ListFlags, ctx: CliContext): Promise<void> {
  const [{ withStore }, { predictionRecord }] = await Promise.all([import('../store.js'), import('../../sinks/outputs.js')]);
  const items = await withStore(flags, process.env, (s) =>
    s.listPredictions({
      limit: flags.limit,
      ...(flags.route ? { route: flags.route } : {}),
      ...(flags.after === undefined ? {} : { after: flags.after }),
    }),
  );
  const records = items.map(predictionRecord);
  const write = writerFor(ctx.stdout);
  if (flags.json === true) return write(`${JSON.stringify(records)}\n`);
  if (records.length === 0) return write('no predictions\n');
  await write(`id\troute\tsaved at\tcomment id\tmodel\tlabels\n${records.map(line).join('\n')}\n`);
}

export const predictionsCommand: CliCommand = {
  name: 'predictions',
  register(program: Command, ctx: CliContext): void {
    const cmd = program.command('predictions').description('the predictions stored by predict routes');
    cmd
      .command('list')
      .description('list stored predictions by id (a re-predicted comment shows once, with its latest labels)')
      .option('--config <file>', 'mailgate.yaml (for its store)')
      .option('--store <url>', `sqlite:PATH or postgres://… (default ${DEFAULT_STORE_URL})`)
      .option('--route <name>', 'only this route')
      .option('--limit <n>', 'at most n (1..10000)', integerOption(1, 10_000), 100)
      .option('--after <id>', 'only ids greater than this', integerOption(0))
      .option('--json', 'a JSON array on stdout, one object per prediction as the sinks write it')
      .action((flags: ListFlags) => list(flags, ctx));
  },
};
