/**
 * Google Vault mail exports: a zip (or its unpacked folder) of mbox files beside
 * `…-metadata.xml` files listing, per message, its `Rfc822MessageId`, `Labels` and `Account`.
 * Messages are read from the mboxes (streamed entry by entry, never unpacked to disk); labels and
 * account come from the XML, matched by Message-ID, into the origin (`{labels}`, `{account}`).
 * The metadata of the export is held in memory as a map of Message-ID → labels and account.
 */
import { createReadStream } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { XMLParser } from 'fast-xml-parser';
import yauzl from 'yauzl';
import { GatewayError } from '../../src/errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/limits.js';
import { MboxFinisher } from '../../src/mime/mbox-finish.js';
import { MboxSplitter } from '../../src/mime/mbox-split.js';
import { splitHeader } from '../../src/mime/header-split.js';
import { messageIdOf } from '../../src/document/comment-id.js';
import type { FileItem, ReadOptions } from './types.js';
import { fileOrigin } from './identity.js';

export interface VaultFacts {
  labels: string[];
  account?: string;
}

import { METADATA_RE, MBOX_RE } from './vault-dir.js';

export { isVaultDir } from './vault-dir.js';

type Tag = { TagName?: string; TagValue?: string };
type Doc = { Tags?: { Tag?: Tag | Tag[] } };

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Message-ID → labels and account, from one metadata XML (Vault's `Root/Batch/Documents/Document/Tags/Tag`). */
export function vaultMetadata(xml: string, into = new Map<string, VaultFacts>()): Map<string, VaultFacts> {
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', processEntities: true });
  const root = parser.parse(xml) as {
    Root?: { Batch?: { Documents?: { Document?: Doc | Doc[] } } | Array<{ Documents?: { Document?: Doc | Doc[] } }> };
  };
  for (const batch of list(root.Root?.Batch)) {
    for (const doc of list(batch.Documents?.Document)) {
      const tags = new Map(list(doc.Tags?.Tag).map((t) => [String(t.TagName ?? '').toLowerCase(), String(t.TagValue ?? '')]));
      const id = (tags.get('rfc822messageid') ?? tags.get('#message-id') ?? '').trim();
      if (id === '') continue;
      const labels = (tags.get('labels') ?? '')
        .split(',')
        .map((l) => l.trim())
        .filter((l) => l !== '');
      const account = tags.get('account')?.trim();
      into.set(bare(id), { labels, ...(account ? { account } : {}) });
    }
  }
  return into;
}

/** Message-IDs compared without angle brackets and case. */
const bare = (id: string) => id.replace(/^<|>$/g, '').toLowerCase();

function invalid(path: string, why: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_INPUT_VAULT_INVALID', `${path} is not a readable Google Vault export: ${why}`);
}

/** A Vault export's parts: metadata XML texts and mbox streams, in name order. */
interface Export {
  metadata(): Promise<string[]>;
  mboxes(): AsyncGenerator<{ name: string; open: () => Promise<Readable> }>;
}

function zipExport(path: string): Export {
  const listing = async () => {
    const zip = await new Promise<yauzl.ZipFile>((res, rej) =>
      yauzl.open(path, { lazyEntries: true, autoClose: false }, (e, z) => (e ? rej(e) : res(z))),
    );
    const out: yauzl.Entry[] = [];
    await new Promise<void>((res, rej) => {
      zip.on('entry', (e: yauzl.Entry) => {
        out.push(e);
        zip.readEntry();
      });
      zip.on('end', () => res());
      zip.on('error', rej);
      zip.readEntry();
    });
    return { zip, entries: out.sort((a, b) => (a.fileName < b.fileName ? -1 : 1)) };
  };
  const open = (zip: yauzl.ZipFile, e: yauzl.Entry) =>
    new Promise<Readable>((res, rej) => zip.openReadStream(e, (err, s) => (err ? rej(err) : res(s))));
  return {
    async metadata() {
      const { zip, entries } = await listing();
      try {
        const texts: string[] = [];
        for (const e of entries.filter((x: yauzl.Entry) => METADATA_RE.test(x.fileName))) {
          const chunks: Buffer[] = [];
          for await (const c of await open(zip, e)) chunks.push(c as Buffer);
          texts.push(Buffer.concat(chunks).toString('utf8'));
        }
        return texts;
      } finally {
        zip.close();
      }
    },
    async *mboxes() {
      const { zip, entries } = await listing();
      try {
        for (const e of entries.filter((x: yauzl.Entry) => MBOX_RE.test(x.fileName))) yield { name: e.fileName, open: () => open(zip, e) };
      } finally {
        zip.close();
      }
    },
  };
}

function dirExport(dir: string): Export {
  const names = async () => (await readdir(dir)).sort();
  return {
    async metadata() {
      return Promise.all((await names()).filter((n) => METADATA_RE.test(n)).map((n) => readFile(join(dir, n), 'utf8')));
    },
    async *mboxes() {
      for (const n of (await names()).filter((x) => MBOX_RE.test(x))) yield { name: n, open: async () => createReadStream(join(dir, n)) };
    },
  };
}

/** Whether a zip holds a `…-metadata.xml` (a Vault export); false for any other zip or a broken one. */
export async function isVaultZip(path: string): Promise<boolean> {
  try {
    return (await zipExport(path).metadata()).length > 0;
  } catch {
    return false;
  }
}

/**
 * Every message of the export's mboxes in name order, with `labels` and `account` from the
 * metadata. The position is the message's index across the mboxes: a resume reads the
 * compressed entries again and skips the messages before it.
 */
export async function* readVault(
  path: string,
  zip: boolean,
  options: ReadOptions & { resume?: { index: number } } = {},
): AsyncGenerator<FileItem> {
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const source = zip ? zipExport(path) : dirExport(path);
  let facts: Map<string, VaultFacts>;
  try {
    facts = new Map();
    for (const xml of await source.metadata()) vaultMetadata(xml, facts);
  } catch (err) {
    yield {
      origin: fileOrigin(path, 0),
      offset: 0,
      next: { index: 1, offset: 0 },
      error: invalid(path, (err as Error).message),
    };
    return;
  }
  let index = 0;
  const skip = options.resume?.index ?? 0;
  for await (const mbox of source.mboxes()) {
    const splitter = new MboxSplitter(maxBytes, 0);
    const finisher = new MboxFinisher(options.mboxQuoting ?? 'mboxrd', maxBytes);
    const emit = function* (messages: ReturnType<MboxFinisher['push']>): Generator<FileItem> {
      for (const m of messages) {
        const at = index++;
        if (at < skip) continue;
        const base = {
          origin: fileOrigin(path, at, { folder: mbox.name }),
          offset: 0,
          next: { index: at + 1, offset: 0 },
        };
        if (!m.raw) {
          yield {
            ...base,
            error: new GatewayError('MAILGATE_ERR_MIME_TOO_LARGE', `message ${at} of ${path} is larger than ${maxBytes} bytes`),
          };
          continue;
        }
        const id = messageIdOf(splitHeader(m.raw, 0, m.raw.length).fields);
        const f = id === undefined ? undefined : facts.get(bare(id));
        yield {
          ...base,
          origin: fileOrigin(path, at, { folder: mbox.name, ...(f && { labels: f.labels }), ...(f?.account && { account: f.account }) }),
          raw: m.raw,
        };
      }
    };
    for await (const chunk of await mbox.open()) for (const seg of splitter.push(chunk as Buffer)) yield* emit(finisher.push(seg));
    for (const seg of splitter.end()) yield* emit(finisher.push(seg));
    yield* emit(finisher.end());
  }
}
