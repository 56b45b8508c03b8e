import test from 'ava';
import type { ChainStatus } from '../../../../src/chains/chain-watcher';
import { chainStatusLines } from '../../../../src/cli/commands/chain-status';

const row = (over: Partial<ChainStatus>): ChainStatus => ({
  chain_id: 'ethereum',
  kind: 'evm',
  node_tip: 120,
  scanned_height: 118,
  lag: 2,
  maintenance: false,
  maintenance_reason: null,
  scanning: true,
  last_error: null,
  last_error_at: null,
  last_poll_at: '2026-01-01T00:00:00.000Z',
  ...over,
});

test('status prints each chain with its node tip, scanned height, lag and state', (t) => {
  t.deepEqual(chainStatusLines([row({}), row({ chain_id: 'polygon', node_tip: 7, scanned_height: 7, lag: 0 })]), [
    'chains:',
    '  ethereum (evm)  tip 120  scanned 118  lag 2  ok',
    '  polygon (evm)   tip 7  scanned 7  lag 0  ok',
  ]);
});

test('a chain in maintenance shows it and its last error with the time', (t) => {
  const lines = chainStatusLines([
    row({
      maintenance: true,
      maintenance_reason: 'evm node eth_getBlockByNumber: unreachable (ECONNREFUSED)',
      last_error: 'evm node eth_getBlockByNumber: unreachable (ECONNREFUSED)',
      last_error_at: '2026-01-01T00:00:05.000Z',
    }),
  ]);
  t.deepEqual(lines, [
    'chains:',
    '  ethereum (evm)  tip 120  scanned 118  lag 2  MAINTENANCE',
    '    last error at 2026-01-01T00:00:05.000Z: evm node eth_getBlockByNumber: unreachable (ECONNREFUSED)',
  ]);
});

test('a chain in maintenance for another reason than its last error says why', (t) => {
  const lines = chainStatusLines([row({ maintenance: true, maintenance_reason: 'node behind: newest block 14 min old', last_error: null })]);
  t.deepEqual(lines, ['chains:', '  ethereum (evm)  tip 120  scanned 118  lag 2  MAINTENANCE', '    maintenance: node behind: newest block 14 min old']);
});

test("a chain another daemon scans shows that daemon's progress and says so", (t) => {
  t.deepEqual(chainStatusLines([row({ scanning: false, node_tip: null, lag: null })]), [
    'chains:',
    '  ethereum (evm)  tip -  scanned 118  lag -  ok (scanned by another daemon)',
  ]);
});

test('an unwatched chain has no heights; no chains says so', (t) => {
  t.deepEqual(
    chainStatusLines([row({ chain_id: 'tron', kind: 'tron', scanning: false, node_tip: null, scanned_height: null, lag: null, last_error: 'not watched' })]),
    ['chains:', '  tron (tron)  tip -  scanned -  lag -  not scanning', '    last error: not watched'],
  );
  t.deepEqual(chainStatusLines([]), ['chains: none configured']);
});
