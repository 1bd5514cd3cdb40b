/**
 * Which parts are the body and which are attachments: RFC 8621 section 4.1.4
 * (JMAP `textBody` / `htmlBody` / `attachments`), as published in the RFC.
 *
 * One addition: image/audio/video parts that JMAP keeps in the body lists (inline media
 * shown between text parts) are also listed as attachments, flagged `inline`, so their
 * metadata is never lost.
 */
import type { MimePart } from './structure.js';

export interface BodyParts {
  textBody: MimePart[];
  htmlBody: MimePart[];
  /** Attachments in document order, with their inline flag. */
  attachments: Array<{ part: MimePart; inline: boolean }>;
}

function isInlineMediaType(type: string): boolean {
  return type.startsWith('image/') || type.startsWith('audio/') || type.startsWith('video/');
}

function walk(
  parts: MimePart[],
  multipartType: string,
  inAlternative: boolean,
  htmlBody: MimePart[] | null,
  textBody: MimePart[] | null,
  attachments: Set<MimePart>,
): void {
  const textLength = textBody ? textBody.length : -1;
  const htmlLength = htmlBody ? htmlBody.length : -1;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const isMultipart = part.children !== undefined;
    const isInline =
      part.disposition !== 'attachment' &&
      (part.type === 'text/plain' || part.type === 'text/html' || isInlineMediaType(part.type)) &&
      (i === 0 || (multipartType !== 'related' && (isInlineMediaType(part.type) || part.name === undefined)));
    if (isMultipart) {
      const sub = part.type.split('/')[1] ?? 'mixed';
      walk(part.children!, sub, inAlternative || sub === 'alternative', htmlBody, textBody, attachments);
    } else if (isInline) {
      if (multipartType === 'alternative') {
        if (part.type === 'text/plain') textBody?.push(part);
        else if (part.type === 'text/html') htmlBody?.push(part);
        else attachments.add(part);
        continue;
      } else if (inAlternative) {
        if (part.type === 'text/plain') htmlBody = null;
        if (part.type === 'text/html') textBody = null;
      }
      textBody?.push(part);
      htmlBody?.push(part);
      if ((!textBody || !htmlBody) && isInlineMediaType(part.type)) attachments.add(part);
    } else {
      attachments.add(part);
    }
  }
  if (multipartType === 'alternative' && textBody && htmlBody) {
    if (textLength === textBody.length && htmlLength !== htmlBody.length) {
      for (let i = htmlLength; i < htmlBody.length; i++) textBody.push(htmlBody[i]!);
    }
    if (htmlLength === htmlBody.length && textLength !== textBody.length) {
      for (let i = textLength; i < textBody.length; i++) htmlBody.push(textBody[i]!);
    }
  }
}

function leaves(part: MimePart, out: MimePart[]): MimePart[] {
  if (part.children === undefined) out.push(part);
  else for (const c of part.children) leaves(c, out);
  return out;
}

export function selectBody(root: MimePart): BodyParts {
  const textBody: MimePart[] = [];
  const htmlBody: MimePart[] = [];
  const jmapAttachments = new Set<MimePart>();
  walk([root], 'mixed', false, htmlBody, textBody, jmapAttachments);
  const inBody = new Set<MimePart>([...textBody, ...htmlBody]);
  const attachments: BodyParts['attachments'] = [];
  for (const leaf of leaves(root, [])) {
    const media = inBody.has(leaf) && leaf.type !== 'text/plain' && leaf.type !== 'text/html';
    if (!jmapAttachments.has(leaf) && !media) continue;
    const inline = leaf.disposition !== 'attachment' && (leaf.contentId || inBody.has(leaf));
    attachments.push({ part: leaf, inline });
  }
  return { textBody, htmlBody, attachments };
}
