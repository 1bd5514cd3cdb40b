// A process that fills a SQLite store with items whose search rows and thread index entries wait
// to be folded ('fill'), or folds (up to 10,000) waiting rows of one kind in one transaction
// ('searches' or 'threads'), printing "folding" just before and "folded" once committed. The
// staged-fold crash test kills it while it folds.
import { join } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const [dist, url, mode, count] = process.argv.slice(2);
const { openStore } = await import(pathToFileURL(join(dist, 'src/store/index.js')).href);
const store = await openStore(url);
try {
  if (mode === 'fill') {
    const n = Number(count);
    for (let i = 0; i < n; i += 500) {
      const items = [];
      for (let j = i; j < Math.min(n, i + 500); j++) {
        // Words and ids in no order, as real subjects, senders and Message-IDs are: each row lands
        // on its own index page.
        const word = ((j * 2654435761) % 4294967296).toString(36);
        const commentId = `${word}-${j}`;
        items.push({
          route: 'r',
          key: `k${j}`,
          commentId,
          document: { raw_email: { headers: { raw: `Subject: ${word}` }, body: { plain: `body ${j}` } }, comment_id: commentId },
          origin: { adapter: 'files', instance: '', id: `/tmp/a.mbox:${j}`, details: { path: '/tmp/a.mbox', index: j } },
          facts: { sender: `${word}@example.com`, senderName: word, subject: `fold ${word}`, messageId: `${word}@m`, timestamp: null },
          thread: {
            source: 'acme/s',
            entry: {
              commentId,
              threadId: `t-${word.slice(0, 3)}`,
              timestamp: '2024-01-01T00:00:00.000Z',
              participants: [`${word}@example.com`],
            },
          },
        });
      }
      await store.enqueue(items);
    }
  } else {
    process.stdout.write('folding\n');
    const n = mode === 'searches' ? await store.foldSearches(10_000) : await store.foldThreads(10_000);
    process.stdout.write(`folded ${n}\n`);
  }
} finally {
  await store.close();
}
