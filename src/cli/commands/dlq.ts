/** `mailgate dlq list|show|replay|purge`: the dead letters of the store. */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { GatewayError } from '../../errors.js';
import type { LogFormat } from '../../log-pretty.js';
import type { DeadLetter, PurgeFilter } from '../../store/types.js';
import type { RouteFlags } from '../route-config.js';
import type { StoreFlags } from '../store.js';
import { EXIT_FAILED } from '../exit-codes.js';
import { integerOption, logFormatOption, routeOptions } from '../options.js';
import type { CliCommand, CliContext } from '../types.js';
import { writerFor } from '../write.js';
import { ask, requireConsentPossible } from '../consent.js';
import { DEFAULT_STORE_URL } from '../../config/defaults.js';

interface ListFlags extends StoreFlags {
  route?: string;
  limit: number;
  after?: number;
  json?: boolean;
}
interface ShowFlags extends StoreFlags {
  json?: boolean;
  raw?: boolean;
}
interface ReplayFlags extends RouteFlags {
  all?: boolean;
  json?: boolean;
  logFormat?: LogFormat;
}
interface PurgeFlags extends StoreFlags {
  route?: string;
  olderThan?: Date;
  all?: boolean;
  json?: boolean;
  yes?: boolean;
}

const idArg = (v: string): number => integerOption(1)(v);
const dateOption = (v: string): Date => {
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw new InvalidArgumentError('expected an ISO-8601 date, e.g. 2026-01-31 or 2026-01-31T12:00:00Z');
  return d;
};

function line(d: DeadLetter, originLabel: (origin: DeadLetter['origin']) => string): string {
  return `${d.id}\t${d.route}\t${d.deadAt}\t${d.error.code}\t${originLabel(d.origin)}\t${d.error.message.replace(/\s+/g, ' ').slice(0, 120)}`;
}

async function list(flags: ListFlags, ctx: CliContext): Promise<void> {
  const [{ withStore }, { originLabel }] = await Promise.all([import('../store.js'), import('../../server/console-rows.js')]);
  const items = await withStore(flags, process.env, (s) =>
    s.listDeadLetters({
      limit: flags.limit,
      ...(flags.route ? { route: flags.route } : {}),
      ...(flags.after === undefined ? {} : { after: flags.after }),
    }),
  );
  const write = writerFor(ctx.stdout);
  if (flags.json === true) return write(`${JSON.stringify(items)}\n`);
  if (items.length === 0) return write('no dead letters\n');
  await write(`id\troute\tdead at\tcode\torigin\tmessage\n${items.map((d) => line(d, originLabel)).join('\n')}\n`);
}

async function show(id: number, flags: ShowFlags, ctx: CliContext): Promise<void> {
  const { withStore } = await import('../store.js');
  const dl = await withStore(flags, process.env, (s) => s.getDeadLetter(id));
  if (dl === undefined) throw new GatewayError('MAILGATE_ERR_STORE_NOT_FOUND', `dead letter ${id} does not exist`);
  if (flags.raw === true) {
    if (dl.raw === undefined) throw new GatewayError('MAILGATE_ERR_STORE_NOT_FOUND', `dead letter ${id} kept no raw bytes`);
    ctx.stdout.write(dl.raw);
    return;
  }
  const { raw, ...rest } = dl;
  const out = { ...rest, rawBytes: raw?.length ?? 0 };
  await writerFor(ctx.stdout)(flags.json === true ? `${JSON.stringify(out)}\n` : `${JSON.stringify(out, null, 2)}\n`);
}

async function replayCmd(ids: number[], flags: ReplayFlags, ctx: CliContext): Promise<void> {
  if (ids.length === 0 && flags.all !== true)
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', 'name dead letter ids, or --all for every dead letter of the route');
  const [{ routeConfig }, { commandLogger }] = await Promise.all([import('../route-config.js'), import('../log.js')]);
  const { config, route } = await routeConfig(flags, process.env);
  const { createRuntime } = await import('../../runtime/index.js');
  const { replay } = await import('../dlq/replay.js');
  const format = flags.logFormat ?? config.log_format;
  const rt = await createRuntime({ config, logger: commandLogger({ level: 'warn', format, stream: ctx.stderr, env: process.env }) });
  try {
    let chosen = ids;
    if (flags.all === true) {
      chosen = [];
      for (let after = 0; ; ) {
        const page = await rt.store.listDeadLetters({ route: route.name, limit: 1000, after });
        chosen.push(...page.map((d) => d.id));
        if (page.length < 1000) break;
        after = page[page.length - 1]!.id;
      }
    }
    const counts = await replay(rt, chosen, (l) => void ctx.stderr.write(`mailgate: ${l}\n`));
    const dead = rt.delivery.counters.rejected + counts.stillDead;
    const out = {
      ...counts,
      delivered: rt.delivery.counters.delivered,
      unchanged: rt.delivery.counters.unchanged,
      deadAgain: dead,
      aiUnits: rt.delivery.counters.aiUnits,
    };
    await writerFor(ctx.stdout)(
      flags.json === true
        ? `${JSON.stringify(out)}\n`
        : `replayed ${counts.requeued} (delivered ${out.delivered}, unchanged ${out.unchanged}), dead again ${dead}, skipped ${counts.skipped}, AI units ${out.aiUnits}\n`,
    );
    if (dead > 0 || counts.skipped > 0) ctx.exitCode = EXIT_FAILED;
  } finally {
    await rt.close();
  }
}

async function purge(ids: number[], flags: PurgeFlags, ctx: CliContext): Promise<void> {
  const filter: PurgeFilter = {};
  if (ids.length > 0) filter.ids = ids;
  if (flags.route !== undefined) filter.route = flags.route;
  if (flags.olderThan !== undefined) filter.olderThan = flags.olderThan;
  if (flags.all === true) filter.all = true;
  if (Object.keys(filter).length === 0)
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', 'name ids, --route, --older-than, or --all to purge every dead letter');
  if (filter.all === true) requireConsentPossible(ctx, flags.yes, 'dlq purge --all deletes dead letters and their kept raw bytes');
  const { withStore } = await import('../store.js');
  const n = await withStore(flags, process.env, async (s) => {
    if (filter.all === true && flags.yes !== true) {
      const scope = flags.route === undefined ? '' : ` of route ${flags.route}`;
      const some = await s.listDeadLetters({ limit: 10_000, ...(flags.route === undefined ? {} : { route: flags.route }) });
      if (some.length === 0) return 0;
      const count = some.length === 10_000 ? 'at least 10000' : String(some.length);
      const question = `mailgate: delete ${count} dead letter(s)${scope}${ids.length > 0 || flags.olderThan ? ' that match' : ''}, with their raw bytes? They cannot be replayed after.`;
      if (!(await ask(ctx, question))) {
        ctx.stderr.write('mailgate: nothing deleted\n');
        ctx.exitCode = EXIT_FAILED;
        return 0;
      }
    }
    return s.purgeDeadLetters(filter);
  });
  await writerFor(ctx.stdout)(flags.json === true ? `${JSON.stringify({ purged: n })}\n` : `purged ${n} dead letter(s)\n`);
}

const storeOpts = (cmd: Command) =>
  cmd
    .option('--config <file>', 'mailgate.yaml (for its store)')
    .option('--store <url>', `sqlite:PATH or postgres://… (default ${DEFAULT_STORE_URL})`);

export const dlqCommand: CliCommand = {
  name: 'dlq',
  register(program: Command, ctx: CliContext): void {
    const dlq = program.command('dlq').description('list, show, replay or purge dead letters');
    storeOpts(dlq.command('list').description('list dead letters, oldest first'))
      .option('--route <name>', 'only this route')
      .option('--limit <n>', 'at most n (1..10000)', integerOption(1, 10_000), 100)
      .option('--after <id>', 'only ids greater than this', integerOption(0))
      .option('--json', 'a JSON array on stdout')
      .action((flags: ListFlags) => list(flags, ctx));
    storeOpts(
      dlq.command('show').description('one dead letter with its error, document and origin').argument('<id>', 'dead letter id', idArg),
    )
      .option('--raw', 'write the kept raw message bytes to stdout instead')
      .option('--json', 'compact JSON')
      .action((id: number, flags: ShowFlags) => show(id, flags, ctx));
    logFormatOption(
      routeOptions(
        dlq
          .command('replay')
          .description('re-parse dead letters from their raw bytes with the current code and configuration, and deliver them'),
      ),
    )
      .argument('[id...]', 'dead letter ids', (v: string, prev: number[] = []) => [...prev, idArg(v)])
      .option('--all', 'every dead letter of the route')
      .option('--json', 'one JSON summary line on stdout')
      .action((ids: number[] | undefined, flags: ReplayFlags) => replayCmd(ids ?? [], flags, ctx));
    storeOpts(
      dlq
        .command('purge')
        .description('delete dead letters (filters combine with AND)')
        .argument('[id...]', 'dead letter ids', (v: string, prev: number[] = []) => [...prev, idArg(v)]),
    )
      .option('--route <name>', 'only this route')
      .option('--older-than <date>', 'dead-lettered before this instant', dateOption)
      .option('--all', 'every dead letter (alone: purge everything); asks first on a terminal')
      .option('--yes', 'with --all: delete without asking (needed off a terminal)')
      .option('--json', 'one JSON line on stdout')
      .action((ids: number[] | undefined, flags: PurgeFlags) => purge(ids ?? [], flags, ctx));
  },
};
