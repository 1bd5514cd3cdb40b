/**
 * The compact fault syntax of `mailgate emulator --faults` (docs/emulator.md "Fault injection"):
 *
 *   spec   := rule ("," rule)*
 *   rule   := endpoint ":" action (":" option)*
 *   action := (STATUS | "quota" | "drop" | "drop_after_apply" | "truncate" | "delay" MS) ("x" TIMES | "@" RATE)?
 *   option := "retry_after=" S | "delay_ms=" MS | "stall_ms=" MS | "times=" N | "rate=" R | "seed=" N | "html" | "apply"
 *           | "message=" TEXT | "status=" STATUS
 *
 * e.g. `sync-raw-emails:429x3:retry_after=1,*:503@0.1:seed=7`.
 */
import { GatewayError } from '../errors.js';
import { validateFaultRule } from './faults.js';
import type { FaultRule } from './types.js';

const ACTION_RE = /^(?:(\d{3})|(drop_after_apply)|(drop)|delay(\d+)|(truncate)|(quota))(?:x(\d+)|@(\d*\.?\d+))?$/;

/**
 * The modelled quota answer (the API defines none; the service's own integration reports
 * `CommentQuotaHit`): 402 with this message unless `status=` / `message=` say otherwise.
 */
export const QUOTA_FAULT = { status: 402, message: 'CommentQuotaHit: the project has reached its comment quota' } as const;
const INT_OPTIONS = new Set(['retry_after', 'delay_ms', 'stall_ms', 'times', 'seed']);

function invalid(message: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_EMULATOR_FAULT_INVALID', message);
}

function parseAction(text: string, rule: FaultRule, where: string): void {
  const m = ACTION_RE.exec(text);
  if (!m)
    throw invalid(`${where}: unknown action "${text}" (want e.g. 429, 503x2, 500@0.1, quota, drop, drop_after_apply, truncate, delay500)`);
  if (m[1] !== undefined) rule.status = Number(m[1]);
  if (m[2] !== undefined) rule.drop_after_apply = true;
  if (m[3] !== undefined) rule.drop = true;
  if (m[4] !== undefined) rule.delay_ms = Number(m[4]);
  if (m[5] !== undefined) rule.truncate = true;
  if (m[6] !== undefined) Object.assign(rule, QUOTA_FAULT);
  if (m[7] !== undefined) rule.times = Number(m[7]);
  if (m[8] !== undefined) rule.rate = Number(m[8]);
}

function parseOption(text: string, rule: FaultRule, where: string): void {
  if (text === 'html' || text === 'apply') {
    rule[text] = true;
    return;
  }
  const eq = text.indexOf('=');
  const key = eq < 0 ? text : text.slice(0, eq);
  const value = eq < 0 ? '' : text.slice(eq + 1);
  if (key === 'message') {
    rule.message = value;
    return;
  }
  if (key === 'status') {
    if (!/^\d{3}$/.test(value)) throw invalid(`${where}: status must be a 3-digit HTTP status`);
    rule.status = Number(value);
    return;
  }
  if (key === 'rate') {
    if (!/^\d*\.?\d+$/.test(value)) throw invalid(`${where}: rate must be a number 0..1`);
    rule.rate = Number(value);
    return;
  }
  if (!INT_OPTIONS.has(key)) throw invalid(`${where}: unknown option "${text}"`);
  if (!/^-?\d+$/.test(value)) throw invalid(`${where}: ${key} must be an integer`);
  (rule as Record<string, number>)[key] = Number(value);
}

/** Parses a fault spec into validated rules; throws MAILGATE_ERR_EMULATOR_FAULT_INVALID naming the bad part. */
export function parseFaultSpec(spec: string): FaultRule[] {
  const trimmed = spec.trim();
  if (trimmed === '') return [];
  return trimmed.split(',').map((part, index) => {
    const where = `fault rule ${index + 1} "${part.trim()}"`;
    const fields = part.trim().split(':');
    if (fields.length < 2) throw invalid(`${where}: want endpoint:action`);
    const rule: FaultRule = {};
    const endpoint = fields[0]!;
    if (endpoint !== '*') rule.endpoint = endpoint as FaultRule['endpoint'];
    parseAction(fields[1]!, rule, where);
    for (const option of fields.slice(2)) parseOption(option, rule, where);
    try {
      return validateFaultRule(rule);
    } catch (err) {
      throw invalid(`${where}: ${(err as Error).message}`);
    }
  });
}
