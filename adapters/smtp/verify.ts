/**
 * SPF, DKIM, DMARC and ARC verdicts of a received message (mailauth), for the envelope: what the
 * sending server could prove, kept beside the message (the bytes are not changed). DNS goes
 * through `resolver` (tests replace it). A verification that fails or runs out of time leaves
 * `temperror`, never a refused message: the verdicts are information for the route.
 *
 * mailauth's `authenticate()` also runs BIMI, whose module loads undici, which needs Node 22; so
 * the steps of `authenticate()` are called here one by one, without BIMI, from mailauth's own
 * modules (the package is pinned exactly; test/smtp/authenticate.test.ts covers the calls).
 */
import { createRequire } from 'node:module';
import type { Envelope } from '../../src/pipeline/types.js';

export type DnsResolver = (name: string, rrtype: string) => Promise<string[][] | string[]>;

export interface VerifyInput {
  raw: Buffer;
  ip: string;
  helo?: string;
  /** MAIL FROM; empty for the null sender. */
  sender: string;
  /** This server's name (authserv-id). */
  mta: string;
  resolver?: DnsResolver;
  timeoutMs: number;
}

export type Verdicts = Pick<Envelope, 'spf' | 'dkim' | 'dmarc'> & { arc: string };

interface Status {
  status: { result: string };
}
interface DkimOutcome {
  results?: Array<Status & { signingDomain?: string; id?: string; status: { aligned?: unknown; underSized?: unknown } }>;
  headerFrom?: unknown;
  fromFields?: unknown;
  arc?: unknown;
}
interface MailauthSteps {
  dkimVerify(raw: Buffer, opts: object): Promise<DkimOutcome>;
  spf(opts: object): Promise<(Status & { domain?: string }) | false>;
  arc(data: unknown, opts: object): Promise<Status | false>;
  evaluateDmarc(opts: object): Promise<{ response?: Status | false }>;
}

let steps: MailauthSteps | undefined;
function mailauth(): MailauthSteps {
  if (steps) return steps;
  const require = createRequire(import.meta.url);
  steps = {
    dkimVerify: (require('mailauth/lib/dkim/verify.js') as Pick<MailauthSteps, 'dkimVerify'>).dkimVerify,
    spf: (require('mailauth/lib/spf/index.js') as Pick<MailauthSteps, 'spf'>).spf,
    arc: (require('mailauth/lib/arc/index.js') as Pick<MailauthSteps, 'arc'>).arc,
    evaluateDmarc: (require('mailauth/lib/dmarc/index.js') as Pick<MailauthSteps, 'evaluateDmarc'>).evaluateDmarc,
  };
  return steps;
}

/** `pass` when any signature passes, else the first signature's result, `none` without one. */
function dkimVerdict(results: ReadonlyArray<Status> | undefined): string {
  if (!results || results.length === 0) return 'none';
  return results.some((r) => r.status.result === 'pass') ? 'pass' : results[0]!.status.result;
}

async function run(input: VerifyInput): Promise<Verdicts> {
  const m = mailauth();
  const resolver = input.resolver ? { resolver: input.resolver } : {};
  const dkim = await m.dkimVerify(input.raw, { ...resolver, sender: input.sender });
  const helo = input.helo ?? `[${input.ip}]`;
  const spf = await m.spf({ ip: input.ip, helo, sender: input.sender, mta: input.mta, ...resolver });
  const arc = await m.arc(dkim.arc, { ...resolver, ip: input.ip });
  let dmarc: Status | false | undefined = false;
  if (dkim.headerFrom) {
    const passing = (dkim.results ?? []).filter((r) => r.status.result === 'pass');
    ({ response: dmarc } = await m.evaluateDmarc({
      headerFrom: dkim.headerFrom,
      fromFields: dkim.fromFields,
      spfDomains: spf && spf.status.result === 'pass' && spf.domain ? [spf.domain] : [],
      dkimDomains: passing.map((r) => ({ id: r.id, domain: r.signingDomain, aligned: r.status.aligned, underSized: r.status.underSized })),
      arcResult: arc,
      ...resolver,
    }));
  }
  return {
    spf: spf ? spf.status.result : 'none',
    dkim: dkimVerdict(dkim.results),
    dmarc: dmarc ? dmarc.status.result : 'none',
    arc: arc ? arc.status.result : 'none',
  };
}

export async function verifyMessage(input: VerifyInput): Promise<Verdicts> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('verification timed out')), input.timeoutMs);
  });
  try {
    return await Promise.race([run(input), expired]);
  } catch {
    return { spf: 'temperror', dkim: 'temperror', dmarc: 'temperror', arc: 'temperror' };
  } finally {
    clearTimeout(timer);
  }
}
