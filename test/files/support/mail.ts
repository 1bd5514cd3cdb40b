/** Reads a rebuilt message back with an independent parser (postal-mime), flattened for assertions. */
import PostalMime from 'postal-mime';

type Email = Awaited<ReturnType<typeof PostalMime.parse>>;
type Addr = NonNullable<Email['to']>[number];

const mailboxes = (list: Addr[] | undefined) => (list ?? []).flatMap((a) => (a.address !== undefined ? [a] : (a.group ?? [])));

export async function readBack(raw: Buffer) {
  const mail = await PostalMime.parse(raw);
  return {
    from: mail.from && mail.from.address !== undefined ? { name: mail.from.name, address: mail.from.address } : undefined,
    to: mailboxes(mail.to).map((m) => m.address),
    cc: mailboxes(mail.cc).map((m) => m.address),
    bcc: mailboxes(mail.bcc).map((m) => m.address),
    subject: mail.subject,
    messageId: mail.messageId,
    date: mail.date,
    text: mail.text,
    html: mail.html,
    attachments: mail.attachments.map((a) => ({
      filename: a.filename,
      mimeType: a.mimeType,
      size: typeof a.content === 'string' ? Buffer.byteLength(a.content) : a.content.byteLength,
      contentId: a.contentId,
    })),
  };
}
