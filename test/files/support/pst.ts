/**
 * The PST and OST files shipped with the reader (`pst-extractor`, MIT: an Enron mailbox from the
 * public Enron corpus, and an Outlook.com test account's OST), read from node_modules: never
 * copied into the repository.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const TESTDATA = join(dirname(createRequire(import.meta.url).resolve('pst-extractor/package.json')), 'example', 'testdata');
export const ENRON_PST = join(TESTDATA, 'enron.pst');
export const TEST_OST = join(TESTDATA, 'pstextractortest@outlook.com.ost');
