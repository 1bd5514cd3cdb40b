/**
 * The id an upload answers for each message, and the only id GET /api/upload/<name>/<id> takes:
 * `<item number>.<tag>`, the tag a keyed hash of the endpoint's name and the item number under
 * the key that uploaded it. Item numbers are sequential; the tag is not guessable, so a key sees
 * the state of the items it uploaded (a duplicate it sent included) and of no other: not another
 * endpoint's, and not another uploader's on the same endpoint. Nothing is stored: the key and the
 * number give the tag again after a restart and on every replica.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Characters of the tag: 22 base64url characters, 132 bits of the HMAC-SHA256. */
const TAG_CHARS = 22;
/** `<item id>.<tag>`: the sink's item ids are decimal numbers; any id without a dot is taken. */
const REF_RE = new RegExp(`^([A-Za-z0-9_-]{1,64})\\.([A-Za-z0-9_-]{${TAG_CHARS}})$`);

function tagOf(key: string, endpoint: string, item: string): string {
  return createHmac('sha256', key).update(`upload-item:${endpoint}:${item}`).digest('base64url').slice(0, TAG_CHARS);
}

/** The id answered for item `item` uploaded with `key` to `endpoint`. */
export function itemRef(key: string, endpoint: string, item: string): string {
  return `${item}.${tagOf(key, endpoint, item)}`;
}

/** The item number `ref` names when `key` made it for `endpoint`; undefined for any other id (compared in constant time). */
export function itemOfRef(key: string, endpoint: string, ref: string): string | undefined {
  const m = REF_RE.exec(ref);
  if (!m) return undefined;
  const want = Buffer.from(tagOf(key, endpoint, m[1]!));
  return timingSafeEqual(want, Buffer.from(m[2]!)) ? m[1] : undefined;
}
