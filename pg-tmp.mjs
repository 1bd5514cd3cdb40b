import { spawnSync } from 'node:child_process';
import { createTestDatabase, startPostgres } from '/work/main/dist/test/support/postgres.js';
const server = await startPostgres({ durable: true });
process.env.MAILGATE_TEST_POSTGRES_URL = server.url;
try {
for (let r = 0; r < 3; r++) {
  const url = await createTestDatabase('mailgate_pgtmp');
  const res = spawnSync('/tmp/prof/imp.sh', [url], { encoding: 'utf8', timeout: 60000 });
  console.log(res.stderr.split('\n').filter((l) => l.includes('wall')).join(' '));
}
} finally { await server.stop(); }
