/**
 * The identity of an IMAP message: where it sits, as IMAP names it for good (RFC 3501 2.3.1.1):
 * the account, the folder, its UIDVALIDITY and its UID. A re-fetch of the same message yields
 * the same key; after a UIDVALIDITY change the folder is read again under new keys, and the
 * deterministic comment ids keep it from becoming new comments.
 */

/** `imap:<account>:<folder>:<uidvalidity>:<uid>`: the form stores written before use (their keys stay valid). */
export function imapKey(account: string, folder: string, uidValidity: number, uid: number): string {
  return `imap:${account}:${folder}:${uidValidity}:${uid}`;
}
