import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageFacts, satisfies, unsupportedNode } from '../../src/cli/node-version.js';
import { MAIN, ROOT, requireBuild } from './support/dist.js';

describe('the Node.js mailgate needs', () => {
  it('is package.json engines.node, at least 22 (Node 20 reached its end of life on 2026-04-30), and this Node has it', () => {
    const { nodeRange } = packageFacts(ROOT);
    expect(nodeRange).toBe('>=22');
    expect(satisfies(process.versions.node, '>=22')).toBe(true);
  });

  it('compares versions part by part, and leaves ranges it cannot read unchecked', () => {
    expect(satisfies('20.20.2', '>=22')).toBe(false);
    expect(satisfies('22.0.0', '>=22')).toBe(true);
    expect(satisfies('22.11.9', '>=22.12')).toBe(false);
    expect(satisfies('24.21.0', '>=22.12.0')).toBe(true);
    expect(satisfies('100.0.0', '>= 22')).toBe(true);
    expect(satisfies('20.0.0', '^22 || ^24')).toBe(true);
  });

  it('names the Node needed, the one running and, in a checkout, how setup.sh brings one', () => {
    const text = unsupportedNode('20.20.2', '>=22', '/usr/bin/node', ROOT);
    expect(text).toContain('mailgate needs Node.js >=22');
    expect(text).toContain('this is Node.js 20.20.2 (/usr/bin/node)');
    expect(text).toContain('bash scripts/setup.sh node');
    expect(unsupportedNode('24.21.0', '>=22', '/x/node', ROOT)).toBeUndefined();
    const elsewhere = mkdtempSync(join(tmpdir(), 'mailgate-pkg-'));
    try {
      expect(unsupportedNode('20.20.2', '>=22', '/usr/bin/node', elsewhere)).toContain('Install Node.js 22 or 24');
    } finally {
      rmSync(elsewhere, { recursive: true });
    }
  });

  it('on an older Node, the mailgate executable says which Node it needs before loading anything else (exit 1)', () => {
    requireBuild();
    // The process believes it is Node 20: what `npm start` on the machine's Node 20 would meet.
    const olderNode = "data:text/javascript,Object.defineProperty(process.versions,'node',{value:'20.20.2'})";
    const run = spawnSync(process.execPath, ['--import', olderNode, MAIN, 'serve'], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('mailgate needs Node.js >=22');
    expect(run.stderr).toContain('this is Node.js 20.20.2');
    expect(run.stdout).toBe('');
    const current = spawnSync(process.execPath, [MAIN, '--version'], { cwd: ROOT, encoding: 'utf8' });
    expect(current.status).toBe(0);
    expect(current.stdout.trim()).toBe(packageFacts(ROOT).version);
  });
});
