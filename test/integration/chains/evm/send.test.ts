/**
 * The EVM adapter's send half against a real anvil: an EIP-1559 quote from the fee history, the
 * account nonce (mined and pending), a broadcast, the status of a sent transaction from unknown to
 * the mempool to mined, and a transaction replaced by another of the same nonce (conflicted).
 */
import test from 'ava';
import { HDNodeWallet, parseEther, Transaction } from 'ethers';
import { EvmAdapter } from '../../../../src/chains/evm/evm-adapter';
import { parseConfig } from '../../../../src/config/schema';
import { anvilChainEntry } from '../../../../src/dev/anvil';
import { ANVIL_CHAIN_ID, ANVIL_MNEMONIC, type AnvilNode } from '../../../../src/dev/anvil-node';
import { killAllAnvils, startAnvil } from '../../../helpers/anvil';

test.after.always(killAllAnvils);

/** A funded anvil account the sandbox does not use. */
const sender = HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, "m/44'/60'/0'/0/7");
const to = HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, "m/44'/60'/0'/0/8").address;

async function anvilRpc(node: AnvilNode, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(node.rpcUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await res.json()) as { result: unknown }).result;
}

async function signed(nonce: number, maxFeePerGas: bigint, maxPriorityFeePerGas: bigint): Promise<{ txid: string; raw: string }> {
  const tx = Transaction.from({ type: 2, chainId: ANVIL_CHAIN_ID, nonce, to, value: parseEther('0.5'), gasLimit: 21_000n, maxFeePerGas, maxPriorityFeePerGas });
  const raw = await sender.signTransaction(tx);
  return { txid: Transaction.from(raw).hash!, raw };
}

test('a quote from the fee history; a sent transaction is unknown, pending, then mined; one replaced by another of its nonce is conflicted', async (t) => {
  const { node, usdt } = await startAnvil();
  const adapter = new EvmAdapter(parseConfig({ chains: [anvilChainEntry(node.rpcUrl, usdt)] }).chains[0]!);
  const quote = await adapter.feeQuote();
  if (quote.kind !== 'evm') return t.fail('an EVM quote');
  t.true(quote.baseFeePerGas > 0n);
  t.is(quote.maxFeePerGas, 2n * quote.baseFeePerGas + quote.maxPriorityFeePerGas);
  t.deepEqual(await adapter.nonce(sender.address), { latest: 0, pending: 0 });

  // Blocks only when the test mines them, so a transaction can wait in the mempool.
  await anvilRpc(node, 'evm_setAutomine', [false]);
  const first = await signed(0, quote.maxFeePerGas, quote.maxPriorityFeePerGas);
  t.deepEqual(await adapter.sentStatus(first), { state: 'unknown' });
  t.is(await adapter.broadcast(first.raw), first.txid);
  t.deepEqual(await adapter.sentStatus(first), { state: 'mempool' });
  t.deepEqual(await adapter.nonce(sender.address), { latest: 0, pending: 1 });
  // Sending it again is harmless.
  t.is(await adapter.broadcast(first.raw), first.txid);

  // The same nonce at a higher fee replaces it.
  const replacement = await signed(0, quote.maxFeePerGas * 2n, quote.maxPriorityFeePerGas * 2n + 1n);
  t.is(await adapter.broadcast(replacement.raw), replacement.txid);
  t.deepEqual(await adapter.sentStatus(first), { state: 'conflicted' });
  t.deepEqual(await adapter.sentStatus(replacement), { state: 'mempool' });

  await node.mine(1);
  const height = await node.blockNumber();
  const mined = await adapter.sentStatus(replacement);
  t.like(mined, { state: 'mined', height, succeeded: true });
  t.is(mined.state === 'mined' ? mined.blockHash : null, (await adapter.header(height)).hash);
  t.deepEqual(await adapter.sentStatus(first), { state: 'conflicted' });
  t.deepEqual(await adapter.nonce(sender.address), { latest: 1, pending: 1 });
});
