/**
 * Client user properties, validated as the API requires: keys `string:<name>` or
 * `number:<name>` (name: letters, digits, `_` and spaces, starting and ending with a letter,
 * digit or `_`, at most 32 characters); string values must be strings, number values
 * finite numbers. String values that are empty or whitespace only are dropped, as the
 * official client does. Anything invalid is dropped with MAILGATE_WARN_PROPERTY_DROPPED.
 */
import { warning, type Warning } from '../errors.js';
import type { UserProperties } from '../model/index.js';
import { isValidPropertyName, PROPERTY_KEY_RE } from '../model/names.js';

function problem(key: string, value: unknown): string | undefined {
  const m = PROPERTY_KEY_RE.exec(key);
  if (m === null) return 'key has no string: or number: prefix';
  if (!isValidPropertyName(m[2]!)) return 'invalid property name';
  if (m[1] === 'string') {
    if (typeof value !== 'string') return 'value is not a string';
    if (value.trim() === '') return 'value is empty';
    return undefined;
  }
  return typeof value === 'number' && Number.isFinite(value) ? undefined : 'value is not a finite number';
}

export function validProperties(props: UserProperties | undefined, warnings: Warning[]): UserProperties | undefined {
  if (props === undefined) return undefined;
  const out: UserProperties = {};
  let n = 0;
  for (const [key, value] of Object.entries(props)) {
    const why = problem(key, value);
    if (why === undefined) {
      out[key] = value;
      n++;
    } else {
      warnings.push(warning('MAILGATE_WARN_PROPERTY_DROPPED', `user property "${key.slice(0, 64)}" dropped: ${why}`));
    }
  }
  return n > 0 ? out : undefined;
}
