/**
 * The gas of a pass's alike token transfers: estimated once per kind, each other one run once at
 * that gas; one that does not run there, or whose kind's estimate was refused, gets its own
 * estimate. A scripted node counts what it was asked.
 */
import test from 'ava';
import type { EvmCall } from '../../../../../src/chains/evm/evm-adapter';
import { estimateAlike } from '../../../../../src/chains/evm/payouts/evm-node';

/** Gas needed by sender (a missing sender reverts); what the node was asked, in order. */
function scriptedNode(need: Record<string, bigint>) {
  const asked: string[] = [];
  return {
    asked,
    async estimateGasAll(calls: readonly EvmCall[]) {
      asked.push(`estimate ${calls.map((c) => c.from).join(',')}`);
      return calls.map((c) => (need[c.from] === undefined ? { error: 'execution reverted' } : { gas: need[c.from]! }));
    },
    async succeedWithGas(calls: ReadonlyArray<EvmCall & { gas: bigint }>) {
      asked.push(`run ${calls.map((c) => `${c.from}@${c.gas}`).join(',')}`);
      return calls.map((c) => (need[c.from] === undefined ? 'execution reverted' : c.gas >= need[c.from]! ? null : 'out of gas'));
    },
  };
}

const item = (from: string, alike: string) => ({ call: { from, to: '0xtoken', data: '0x' }, alike });

test('alike transfers are estimated once and each other one run once at that gas', async (t) => {
  const node = scriptedNode({ a: 51_000n, b: 51_000n, c: 34_000n, d: 51_000n });
  const gas = await estimateAlike(node, [item('a', 'T1'), item('b', 'T1'), item('c', 'T1'), item('d', 'T2')]);
  t.deepEqual(gas, [{ gas: 51_000n }, { gas: 51_000n }, { gas: 51_000n }, { gas: 51_000n }]);
  t.deepEqual(node.asked, ['estimate a,d', 'run b@51000,c@51000', 'estimate ']);
});

test("one that does not run to its end at its kind's gas is estimated on its own", async (t) => {
  const node = scriptedNode({ a: 34_000n, b: 51_000n });
  const gas = await estimateAlike(node, [item('a', 'T'), item('b', 'T')]);
  t.deepEqual(gas, [{ gas: 34_000n }, { gas: 51_000n }]);
  t.deepEqual(node.asked, ['estimate a', 'run b@34000', 'estimate b']);
});

test('when the first of a kind would revert, the others are estimated each on its own, and a refusal stays a refusal', async (t) => {
  const node = scriptedNode({ b: 51_000n });
  const gas = await estimateAlike(node, [item('a', 'T'), item('b', 'T'), item('c', 'T')]);
  t.deepEqual(gas, [{ error: 'execution reverted' }, { gas: 51_000n }, { error: 'execution reverted' }]);
  t.deepEqual(node.asked, ['estimate a', 'run ', 'estimate b,c']);
});
