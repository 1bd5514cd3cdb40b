/**
 * The rules of the API's ids and property names as plain functions, without zod: the parse
 * workers (src/pipeline/worker.ts) check ids and property names on every message, and loading
 * zod (about a hundred modules) would delay every worker's start. The schemas in index.ts use
 * the same rules.
 */
import { MAX_COMMENT_ID_CHARS, MAX_PROPERTY_NAME_CHARS } from '../limits.js';

/** spec Comment.id and thread_id: lowercase hex, 1 to 1024 characters. */
export const HEX_ID_RE = /^[0-9a-f]+$/;

export function isHexId(id: string): boolean {
  return id.length >= 1 && id.length <= MAX_COMMENT_ID_CHARS && HEX_ID_RE.test(id);
}

/**
 * A user-property key: `string:<name>` or `number:<name>`. The name holds letters, digits,
 * underscores and spaces, starts and ends with a letter, digit or underscore, and is at most
 * 32 characters (spec Comment.user_properties).
 */
export const PROPERTY_NAME_RE = /^[\p{L}\p{N}_](?:[\p{L}\p{N}_ ]*[\p{L}\p{N}_])?$/u;
export const PROPERTY_KEY_RE = /^(string|number):(.+)$/s;

export function isValidPropertyName(name: string): boolean {
  return name.length <= MAX_PROPERTY_NAME_CHARS && PROPERTY_NAME_RE.test(name);
}

/**
 * User properties the service generates for every raw email (spec "Email comments generated
 * from raw emails"). A client property with one of these names fails the whole request with
 * 422 unless the name is listed in `override_user_properties` (sync only).
 */
export const GENERATED_PROPERTIES = {
  'Has Signature': 'string',
  Sender: 'string',
  Thread: 'string',
  'Message ID': 'string',
  'Sender Domain': 'string',
  'Recipient Count': 'number',
  'Participant Count': 'number',
  'Position in Thread': 'number',
} as const;
export type GeneratedPropertyName = keyof typeof GENERATED_PROPERTIES;

/** The property name of a key (`string:Sender` -> `Sender`), or undefined when the key has no type prefix. */
export function propertyName(key: string): string | undefined {
  const m = PROPERTY_KEY_RE.exec(key);
  return m ? m[2] : undefined;
}
