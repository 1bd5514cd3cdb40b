/** `mailgate emulator`: a local stand-in for the Text Analytics API, until SIGINT/SIGTERM (docs/emulator.md). */
import type { Command } from 'commander';
import type { EmulatorOptions } from '../../emulator/types.js';
import { kindsWith } from '../../../adapters/config.js';
import { GatewayError } from '../../errors.js';
import type { RunningStandIn } from '../../pipeline/kind.js';
import { DEFAULT_TRANSFORM_TAG, MAX_PREDICT_DOCUMENTS, MAX_SYNC_DOCUMENTS } from '../../limits.js';
import { DEFAULT_BODY_LIMIT, DEFAULT_LIVE_VERSION, DEFAULT_MODEL_VERSIONS, DEFAULT_STAGING_VERSION } from '../../emulator/options.js';
import { LOG_FORMATS, resolveLogFormat, type LogFormat } from '../../log-pretty.js';
import { choiceOption, integerOption } from '../options.js';
import type { CliCommand, CliContext } from '../types.js';

/** Flags named and typed as the emulator option they set. */
type SameAsOption =
  | 'maxSyncDocuments'
  | 'maxPredictDocuments'
  | 'modelVersions'
  | 'liveVersion'
  | 'stagingVersion'
  | 'bodyLimit'
  | 'bodies'
  | 'commentsShape'
  | 'labelNames'
  | 'allowNoCharge'
  | 'autoCreateSources';

interface EmulatorFlags extends Pick<EmulatorOptions, SameAsOption> {
  port: number;
  token: string[];
  host?: string;
  data?: string;
  faults?: string;
  transformTag?: string[];
  requireTransformTag: boolean;
  emptyDocuments: boolean;
  log?: boolean;
  logFormat?: LogFormat;
  standIn?: string[];
}

/**
 * `--log`: the emulator's JSON request lines as they always were, or pretty lines through
 * mailgate's logger (which redacts the Authorization header like every secret) with
 * `--log-format pretty` or when stdout is a terminal.
 */
async function requestLogger(flags: EmulatorFlags): Promise<EmulatorOptions['logger']> {
  if (flags.log !== true) return false;
  if (resolveLogFormat(flags.logFormat, process.stdout) === 'json') return true;
  // mailgate's logger redacts a log call's fields before pino's serializers run, so fastify's
  // request serializer (which it adds to any logger) would see the redacted copy of the request,
  // a class instance reduced to its own fields. These pick the fields first; fastify's then names
  // `ip` remoteAddress.
  const fields = {
    req: (r: { method?: string; url?: string; host?: string; ip?: string }) => ({ method: r.method, url: r.url, host: r.host, ip: r.ip }),
    res: (r: { statusCode?: number }) => ({ statusCode: r.statusCode }),
  };
  const { commandLogger } = await import('../log.js');
  return commandLogger({ level: 'info', format: 'pretty', stream: process.stdout, env: process.env, fields }).child({
    component: 'emulator',
  });
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** Starts the stand-ins asked for beside the emulator; they stop with it (SIGINT/SIGTERM). */
async function startStandIns(kinds: string[], host: string, ctx: CliContext): Promise<void> {
  const { isAdapterKind, standInKinds, startStandIn } = await import('../../../adapters/index.js');
  const offered = standInKinds();
  const running: RunningStandIn[] = [];
  for (const kind of new Set(kinds)) {
    if (!isAdapterKind(kind) || !offered.includes(kind)) {
      throw new GatewayError(
        'MAILGATE_ERR_CONFIG_INVALID',
        `--stand-in ${kind}: no adapter kind of that name offers a stand-in (offered: ${offered.join(', ') || 'none'})`,
      );
    }
    running.push(await startStandIn(kind, { host, print: (line) => void ctx.stdout.write(`${line}\n`) }));
  }
  const stop = (): void => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    for (const r of running) void r.close();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

async function run(flags: EmulatorFlags, ctx: CliContext): Promise<void> {
  const { runEmulatorCommand } = await import('../../emulator/index.js');
  if (flags.standIn !== undefined) await startStandIns(flags.standIn, flags.host ?? '127.0.0.1', ctx);
  await runEmulatorCommand({
    port: flags.port,
    host: flags.host,
    token: flags.token,
    dataDir: flags.data,
    faults: flags.faults,
    transformTags: flags.transformTag,
    maxSyncDocuments: flags.maxSyncDocuments,
    maxPredictDocuments: flags.maxPredictDocuments,
    requireTransformTag: flags.requireTransformTag,
    allowNoCharge: flags.allowNoCharge === true,
    autoCreateSources: flags.autoCreateSources === true,
    modelVersions: flags.modelVersions,
    liveVersion: flags.liveVersion,
    stagingVersion: flags.stagingVersion,
    bodyLimit: flags.bodyLimit,
    allowEmptyDocuments: flags.emptyDocuments,
    bodies: flags.bodies,
    commentsShape: flags.commentsShape,
    labelNames: flags.labelNames,
    logger: await requestLogger(flags),
    print: (line) => void ctx.stdout.write(`${line}\n`),
    handleSignals: true,
  });
}

export const emulatorCommand: CliCommand = {
  name: 'emulator',
  register(program: Command, ctx: CliContext): void {
    program
      .command('emulator')
      .description('run a local Text Analytics API emulator (stops on SIGINT/SIGTERM)')
      .requiredOption('--port <n>', 'TCP port (0 picks a free one)', integerOption(0, 65535))
      .requiredOption('--token <token>', 'bearer token the emulator accepts (repeat for several)', collect)
      .option('--host <host>', 'interface to bind', '127.0.0.1')
      .option('--data <dir>', 'persist state in this directory and reload it on start')
      .option('--faults <spec>', 'fault injection spec (docs/emulator.md)')
      .option(
        '--transform-tag <tag>',
        `an accepted transform_tag (repeat for several; "*" admits any well-shaped tag; default ${DEFAULT_TRANSFORM_TAG})`,
        collect,
      )
      .option(
        '--max-sync-documents <n>',
        `documents per sync-raw-emails request (default ${MAX_SYNC_DOCUMENTS}; 4096 as the notes' clients document)`,
        integerOption(1, MAX_SYNC_DOCUMENTS),
      )
      .option(
        '--max-predict-documents <n>',
        `documents per predict-raw-emails request (default ${MAX_PREDICT_DOCUMENTS})`,
        integerOption(1, MAX_PREDICT_DOCUMENTS),
      )
      .option('--no-require-transform-tag', 'a request without transform_tag uses the first accepted tag instead of 422')
      .option('--allow-no-charge', 'accept ?no_charge=true and bill nothing (default: 403)')
      .option('--auto-create-sources', 'sync-raw-emails to an unknown source creates it (default: 404)')
      .option(
        '--model-versions <n>',
        `model versions of every dataset, 1..n (default ${DEFAULT_MODEL_VERSIONS})`,
        integerOption(1, 1_000_000),
      )
      .option('--live-version <n>', `version "live" resolves to (default ${DEFAULT_LIVE_VERSION})`, integerOption(1, 1_000_000))
      .option('--staging-version <n>', `version "staging" resolves to (default ${DEFAULT_STAGING_VERSION})`, integerOption(1, 1_000_000))
      .option(
        '--body-limit <bytes>',
        `request body limit in bytes (default ${DEFAULT_BODY_LIMIT / 2 ** 20} MiB)`,
        integerOption(1024, 2 ** 31 - 1),
      )
      .option('--no-empty-documents', 'answer an empty documents list with 400 (default: accepted, zero counts)')
      .option(
        '--bodies <rule>',
        'raw email body: exactly-one (default) or at-least-one of plain/html',
        choiceOption(['exactly-one', 'at-least-one'] as const),
      )
      .option(
        '--comments-shape <shape>',
        'sync include_comments elements: comment (default) or with-thread-properties',
        choiceOption(['comment', 'with-thread-properties'] as const),
      )
      .option(
        '--label-names <form>',
        'predicted label names: parts (default, ["A","B"]) or string ("A > B")',
        choiceOption(['parts', 'string'] as const),
      )
      .option(
        '--stand-in <kind>',
        `also run the kind's local stand-in of the service it reads, seeded with sample mail (repeat for several; ${kindsWith('standIn').join(', ')})`,
        collect,
      )
      .option('--log', 'log requests (the Authorization header is redacted)')
      .option('--log-format <format>', 'with --log: json | pretty (default: pretty when stdout is a terminal)', choiceOption(LOG_FORMATS))
      .action((flags: EmulatorFlags) => run(flags, ctx));
  },
};
