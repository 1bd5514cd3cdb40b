/** The kinds of mail a mailbox (or `--skip` of `preview` and `import`) can leave out; plain values, read without the schema. */
export const SKIP_KINDS = ['auto_replies', 'mailing_lists'] as const;
export type SkipKind = (typeof SKIP_KINDS)[number];
