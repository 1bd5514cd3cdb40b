/**
 * A message rebuilt from an archive's properties rather than read as it travelled (an Outlook
 * item without transport headers: sent items, drafts, items made in Outlook) carries this field
 * in its header block, saying what was built. The document leaves the field out and turns it
 * into MAILGATE_WARN_HEADERS_SYNTHESIZED on the item, so the rebuild is never silent.
 */
export const SYNTHESIZED_FIELD = 'X-Mailgate-Synthesized';

/** The field's line: `what` says which headers were built from what. */
export function synthesizedLine(what: string): string {
  return `${SYNTHESIZED_FIELD}: ${what.replace(/[\r\n]+/g, ' ')}`;
}
