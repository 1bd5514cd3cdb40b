/**
 * Fault injection: an ordered plan of rules, consulted once per API request.
 * The first rule that matches the endpoint and fires decides what happens to the request.
 */
import { GatewayError } from '../errors.js';
import type { EndpointName, FaultRule } from './types.js';
import { prng } from '../prng.js';

const ENDPOINTS: ReadonlySet<string> = new Set<EndpointName | '*'>([
  '*',
  'sync-raw-emails',
  'predict-raw-emails',
  'sources',
  'comments',
  'threads',
  'datasets',
  'other',
]);

function invalid(message: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_EMULATOR_FAULT_INVALID', message);
}

function isNonNegInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/** Throws MAILGATE_ERR_EMULATOR_FAULT_INVALID unless the rule is meaningful and consistent. */
export function validateFaultRule(rule: FaultRule): FaultRule {
  const r = rule as Record<string, unknown>;
  const known = [
    'endpoint',
    'status',
    'message',
    'retry_after',
    'delay_ms',
    'drop',
    'drop_after_apply',
    'truncate',
    'stall_ms',
    'apply',
    'html',
    'times',
    'rate',
    'seed',
  ];
  for (const key of Object.keys(r)) if (!known.includes(key)) throw invalid(`unknown fault rule field "${key}"`);
  if (rule.endpoint !== undefined && !ENDPOINTS.has(rule.endpoint)) throw invalid(`unknown endpoint "${String(rule.endpoint)}"`);
  if (rule.status !== undefined && !(Number.isInteger(rule.status) && rule.status >= 400 && rule.status <= 599)) {
    throw invalid('status must be an integer 400-599');
  }
  if (rule.delay_ms !== undefined && !isNonNegInt(rule.delay_ms)) throw invalid('delay_ms must be a non-negative integer');
  if (rule.retry_after !== undefined && !isNonNegInt(rule.retry_after))
    throw invalid('retry_after must be a non-negative integer (seconds)');
  if (rule.times !== undefined && !isNonNegInt(rule.times)) throw invalid('times must be a non-negative integer');
  if (rule.rate !== undefined && !(typeof rule.rate === 'number' && rule.rate >= 0 && rule.rate <= 1))
    throw invalid('rate must be a number 0..1');
  if (rule.seed !== undefined && !Number.isInteger(rule.seed)) throw invalid('seed must be an integer');
  if (rule.times !== undefined && rule.rate !== undefined) throw invalid('a rule takes times or rate, not both');
  if (rule.stall_ms !== undefined && !isNonNegInt(rule.stall_ms)) throw invalid('stall_ms must be a non-negative integer');
  const drops = (rule.drop === true ? 1 : 0) + (rule.drop_after_apply === true ? 1 : 0) + (rule.truncate === true ? 1 : 0);
  if (drops > 1) throw invalid('drop, drop_after_apply and truncate exclude each other');
  if (drops === 1 && rule.status !== undefined) throw invalid('a dropped or truncated answer has no status of its own');
  if (rule.stall_ms !== undefined && rule.truncate !== true) throw invalid('stall_ms needs truncate');
  if (rule.status === undefined && drops === 0 && rule.delay_ms === undefined)
    throw invalid('a rule needs status, drop, drop_after_apply, truncate or delay_ms');
  if (
    rule.status === undefined &&
    (rule.html === true || rule.retry_after !== undefined || rule.apply === true || rule.message !== undefined)
  ) {
    throw invalid('html, message, retry_after and apply need a status');
  }
  if (rule.message !== undefined && (typeof rule.message !== 'string' || rule.message.length === 0 || rule.message.length > 1000))
    throw invalid('message must be a string of 1-1000 characters');
  return rule;
}

interface ActiveRule {
  rule: FaultRule;
  remaining: number | undefined;
  random: (() => number) | undefined;
}

export class FaultPlan {
  private rules: ActiveRule[] = [];

  constructor(rules: FaultRule[] = []) {
    this.set(rules);
  }

  /** Replaces the plan (validating every rule first, so a bad plan changes nothing). */
  set(rules: FaultRule[]): void {
    if (!Array.isArray(rules)) throw invalid('rules must be an array');
    const checked = rules.map((r) => validateFaultRule({ ...r }));
    this.rules = checked.map((rule) => ({
      rule,
      remaining: rule.times,
      random: rule.rate === undefined ? undefined : prng(rule.seed ?? Math.floor(Math.random() * 2 ** 31)),
    }));
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r.rule, ...(r.remaining === undefined ? {} : { times: r.remaining }) }));
  }

  /** The rule that decides this request, consuming one `times` use; undefined when none fires. */
  pick(endpoint: EndpointName): FaultRule | undefined {
    for (const active of this.rules) {
      const target = active.rule.endpoint ?? '*';
      if (target !== '*' && target !== endpoint) continue;
      if (active.remaining !== undefined && active.remaining <= 0) continue;
      if (active.random !== undefined && active.random() >= (active.rule.rate ?? 0)) continue;
      if (active.remaining !== undefined) active.remaining -= 1;
      return active.rule;
    }
    return undefined;
  }
}
