/** Option parsers for commander: explicit validation, 0 means 0, errors name the flag; the route and log flags shared by commands. */
import { InvalidArgumentError, type Command } from 'commander';
import { LOG_FORMATS } from '../log-pretty.js';
import { DEFAULT_STORE_URL } from '../config/defaults.js';
import { CLAIM_LEASE_BOUNDS, CLAIM_LEASE_MS } from '../limits.js';

export function integerOption(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  const expected = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
  return (value: string) => {
    const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected ${expected}`);
    return n;
  };
}

export function choiceOption<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value: string) => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${choices.join(', ')}`);
    return value as T;
  };
}

/** Flags naming the route and the API; shared with `dlq replay`. */
export function routeOptions(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'mailgate.yaml to read (with --route NAME)')
    .option('--route <name>', 'route of the configuration file (or the name of the standalone route, default "import")')
    .option('--api-url <url>', 'Text Analytics API base URL (omit: the built-in emulator)')
    .option('--token <token>', 'API token (default: MAILGATE_API_TOKEN)')
    .option('--source <project/source>', 'sync target source')
    .option('--transform-tag <tag>', 'transform tag from the integration setup')
    .option('--mode <mode>', 'sync | predict (default sync)', choiceOption(['sync', 'predict'] as const))
    .option('--dataset <project/dataset>', 'predict target dataset')
    .option('--model-version <v>', 'predict model version: a number, live or staging')
    .option('--threshold <t>', 'predict threshold 0..1 or auto')
    .option('--store <url>', `sqlite:PATH or postgres://… (default ${DEFAULT_STORE_URL})`);
}

/** `--log-format` of the commands that log; it overrides `log_format` and MAILGATE_LOG_FORMAT. */
export function logFormatOption(cmd: Command): Command {
  return cmd.option(
    '--log-format <format>',
    'json | pretty: log lines as JSON, or one readable line per event (default: pretty when the log stream is a terminal)',
    choiceOption(LOG_FORMATS),
  );
}

/** `--lease-ms` of `serve` and `import`: one rule (CLAIM_LEASE_BOUNDS, which the runtime applies too) and one text. */
export function leaseMsOption(cmd: Command): Command {
  return cmd.option(
    '--lease-ms <ms>',
    `outbox claim lease, ${CLAIM_LEASE_BOUNDS.min} to ${CLAIM_LEASE_BOUNDS.max} ms (default ${CLAIM_LEASE_MS}): claims of a process that died and never registered free up after this long`,
    integerOption(CLAIM_LEASE_BOUNDS.min, CLAIM_LEASE_BOUNDS.max),
  );
}
