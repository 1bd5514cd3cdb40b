/**
 * The identity of an IMAP message: where it sits, as IMAP names it for good (RFC 3501 2.3.1.1):
 * the account, the folder, its UIDVALIDITY and its UID. A re-fetch of the same message yields
 * the same key; after a UIDVALIDITY change the folder is read again under new keys, and the
 * deterministic comment ids keep it from becoming new comments.
 */
import type { Origin } from '../../src/pipeline/types.js';

/** The IMAP kind's details of an origin: where the message sits. */
export interface ImapDetails {
  folder: string;
  uidValidity: number;
  uid: number;
}

/** The origin of a message read from `folder` of `account`: the id `<folder>:<uidvalidity>:<uid>`. */
export function imapOrigin(account: string, folder: string, uidValidity: number, uid: number): Origin {
  const details: ImapDetails = { folder, uidValidity, uid };
  return { adapter: 'imap', instance: account, id: `${folder}:${uidValidity}:${uid}`, details: { ...details } };
}

/** The details of an origin of `account`'s messages, or undefined for another adapter's or account's. */
export function imapDetails(o: Origin, account: string): ImapDetails | undefined {
  if (o.adapter !== 'imap' || o.instance !== account) return undefined;
  const { folder, uidValidity, uid } = o.details;
  return typeof folder === 'string' && typeof uidValidity === 'number' && typeof uid === 'number'
    ? { folder, uidValidity, uid }
    : undefined;
}

/** `imap:<account>:<folder>:<uidvalidity>:<uid>`: the form stores written before use (their keys stay valid). */
export function imapKey(account: string, folder: string, uidValidity: number, uid: number): string {
  return `imap:${account}:${folder}:${uidValidity}:${uid}`;
}
