/**
 * `mailgate webhook simulate <provider> FILE.eml --url URL`: sends a message the way the provider
 * would (its signature, its payload shape) to a mailgate endpoint, with the secrets of a
 * configuration entry or of flags, and prints the answer; `--print` shows the request instead.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { kindsWith } from '../../../adapters/config.js';
import { GatewayError } from '../../errors.js';
import type { SimulatedRequest } from '../../pipeline/kind.js';
import type { Envelope } from '../../pipeline/types.js';
import { EXIT_FAILED } from '../exit-codes.js';
import { integerOption } from '../options.js';
import { codedError, isSuccess, request } from '../push/http.js';
import type { CliCommand, CliContext } from '../types.js';
import { writerFor } from '../write.js';

interface SimulateFlags {
  url: string;
  config?: string;
  name?: string;
  signingKey?: string;
  basicAuth?: { user: string; pass: string };
  token?: string;
  hmacSecret?: string;
  bearer?: string;
  privateKey?: string;
  to?: string[];
  from?: string;
  print?: boolean;
  bodyFile?: string;
  timeoutMs: number;
}

const basicAuth = (v: string): { user: string; pass: string } => {
  const colon = v.indexOf(':');
  if (colon < 1 || colon === v.length - 1) throw new InvalidArgumentError('expected user:pass');
  return { user: v.slice(0, colon), pass: v.slice(colon + 1) };
};
const addressList = (v: string): string[] => {
  const list = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (list.length === 0) throw new InvalidArgumentError('expected one or more addresses, comma-separated');
  return list;
};

function readFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new GatewayError('MAILGATE_ERR_INPUT_NOT_FOUND', `cannot read ${what} ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** The entry whose secrets sign: `--config` + `--name`, else one assembled from the flags. */
async function entryOf(provider: string, flags: SimulateFlags): Promise<unknown> {
  const { simulator } = await import('../../../adapters/index.js');
  const { kind, simulator: sim } = await simulator();
  if (flags.config === undefined) {
    if (flags.name !== undefined) throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', '--name needs --config FILE');
    return sim.entryFromSecrets(
      provider,
      {
        ...(flags.signingKey !== undefined && { signingKey: flags.signingKey }),
        ...(flags.basicAuth !== undefined && { basicAuth: flags.basicAuth }),
        ...(flags.token !== undefined && { token: flags.token }),
        ...(flags.hmacSecret !== undefined && { hmacSecret: flags.hmacSecret }),
        ...(flags.bearer !== undefined && { bearer: flags.bearer }),
        ...(flags.privateKey !== undefined && { privateKeyPem: readFile(flags.privateKey, 'the private key').toString('utf8') }),
      },
      flags.url,
    );
  }
  if (flags.name === undefined)
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `--config needs --name ENTRY (an adapters.${kind}[] name)`);
  const { loadNamedConfig } = await import('../../config/load-named.js');
  const entries = (await loadNamedConfig({ file: flags.config, env: process.env })).adapters[kind] as ReadonlyArray<{ name: string }>;
  const entry = entries.find((e) => e.name === flags.name);
  if (entry === undefined) {
    const names = entries.map((e) => e.name).join(', ') || '(none)';
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `${flags.config} has no adapters.${kind} entry "${flags.name}"; the entries are ${names}`,
    );
  }
  const variant = sim.variantOf(entry);
  if (variant !== provider) {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `adapters.${kind} "${entry.name}" is a ${variant} endpoint, not ${provider}`);
  }
  return entry;
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The request as a curl command line; the body goes to a file (it may be binary, and is often large). */
async function printRequest(req: SimulatedRequest, flags: SimulateFlags, ctx: CliContext): Promise<void> {
  const bodyFile = flags.bodyFile ?? join(mkdtempSync(join(tmpdir(), 'mailgate-simulate-')), 'body');
  writeFileSync(bodyFile, req.body);
  const headers = Object.entries(req.headers)
    .map(([k, v]) => `  -H ${quote(`${k}: ${v}`)} \\\n`)
    .join('');
  await writerFor(ctx.stdout)(`curl -sS -X ${req.method} \\\n${headers}  --data-binary @${quote(bodyFile)} \\\n  ${quote(flags.url)}\n`);
}

async function simulate(provider: string, file: string, flags: SimulateFlags, ctx: CliContext): Promise<void> {
  const raw = readFile(file, 'the message');
  const entry = await entryOf(provider, flags);
  const envelope: Envelope = {
    ...(flags.from !== undefined && { from: flags.from }),
    ...(flags.to !== undefined && { to: flags.to }),
  };
  const { simulator } = await import('../../../adapters/index.js');
  const { simulator: sim } = await simulator();
  const privateKeyPem = flags.privateKey === undefined ? undefined : readFile(flags.privateKey, 'the private key').toString('utf8');
  const req = sim.request(entry, raw, {
    url: flags.url,
    now: Date.now(),
    ...(Object.keys(envelope).length > 0 && { envelope }),
    ...(privateKeyPem !== undefined && { privateKeyPem }),
  });
  if (flags.print === true) return printRequest(req, flags, ctx);
  const answer = await request('POST', flags.url, req.headers, req.body, flags.timeoutMs);
  await writerFor(ctx.stdout)(`HTTP ${answer.status}\n${answer.text}${answer.text.endsWith('\n') || answer.text === '' ? '' : '\n'}`);
  if (!isSuccess(answer.status)) {
    const coded = codedError(answer.text);
    ctx.stderr.write(
      `mailgate: ${provider} request refused with HTTP ${answer.status}${coded ? `: ${coded.code}: ${coded.message}` : ''}\n`,
    );
    ctx.exitCode = EXIT_FAILED;
  }
}

export const webhookCommand: CliCommand = {
  name: 'webhook',
  register(program: Command, ctx: CliContext): void {
    const cmd = program.command('webhook').description('test webhook endpoints as the mail providers call them');
    cmd
      .command('simulate')
      .description(
        'sign a message as <provider> would (sendgrid, mailgun, postmark, ses, mandrill, sparkpost, raw), POST it to --url, ' +
          'print the status and answer; exit 0 on 2xx',
      )
      .argument('<provider>', 'the provider whose request to build')
      .argument('<file>', 'the message (.eml)')
      .requiredOption('--url <url>', 'the endpoint, e.g. http://127.0.0.1:8080/webhooks/mailgun-in (user:pass@ taken as basic auth)')
      .option('--config <file>', "mailgate.yaml whose entry's secrets sign (with --name)")
      .option('--name <entry>', `the adapters.${kindsWith('simulate').join('|')}[] entry of --config`)
      .option('--signing-key <key>', 'mailgun: signing key; mandrill: webhook key')
      .option('--basic-auth <user:pass>', 'postmark, sendgrid: HTTP basic auth', basicAuth)
      .option('--token <token>', 'sparkpost: the relay webhook auth_token')
      .option('--hmac-secret <secret>', 'raw: HMAC secret of X-Mailgate-Signature')
      .option('--bearer <key>', 'raw: a bearer key')
      .option(
        '--private-key <pem-file>',
        "sendgrid: EC private key of the signed-webhook policy (its public key is the entry's public_key)",
      )
      .option('--to <addr,...>', 'envelope recipients (default: the To header)', addressList)
      .option('--from <addr>', 'envelope sender (default: the From header)')
      .option('--print', 'print the request as a curl command (body written to a file) instead of sending it')
      .option('--body-file <path>', 'with --print: where to write the body (default: a new temporary file)')
      .option('--timeout-ms <n>', 'bound on the request, in ms', integerOption(1, 3_600_000), 30_000)
      .action((provider: string, file: string, flags: SimulateFlags) => simulate(provider, file, flags, ctx));
  },
};
