/**
 * The EVM adapter's send half against a real anvil: an EIP-1559 quote from the fee history, the
 * account nonce (mined and pending), a broadcast, the status of a sent transaction from unknown to
 * the mempool to mined, and a transaction replaced by another of the same nonce (conflicted).
 */
import test from 'ava';
import { HDNodeWallet, parseEther, Transaction } from 'ethers';
import { erc20TransferData } from '../../../../src/chains/evm/erc20';
import { evmScheme } from '../../../../src/chains/evm/derive';
import { EvmAdapter } from '../../../../src/chains/evm/evm-adapter';
import { parseConfig } from '../../../../src/config/schema';
import { anvilChainEntry } from '../../../../src/dev/anvil';
import { ANVIL_CHAIN_ID, ANVIL_MNEMONIC, type AnvilNode } from '../../../../src/dev/anvil-node';
import { silentLogger } from '../../../../src/shared/logger';
import { HdWallet } from '../../../../src/wallet/hd';
import { WalletSigner } from '../../../../src/wallet/signer';
import { killAllAnvils, payFromAnvil, startAnvil } from '../../../helpers/anvil';
import { TEST_MNEMONIC } from '../../../helpers/daemon';
import { until } from '../../../helpers/cli';

test.after.always(killAllAnvils);

/** A funded anvil account the sandbox does not use. */
const sender = HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, "m/44'/60'/0'/0/7");
const to = HDNodeWallet.fromPhrase(ANVIL_MNEMONIC, undefined, "m/44'/60'/0'/0/8").address;

async function anvilRpc(node: AnvilNode, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(node.rpcUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
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

test('an ERC-20 transfer from a wallet address, signed by the signer at the quoted fee and the account nonce, is mined; its block shows the transfer and the sender at that nonce', async (t) => {
  const { node, usdt } = await startAnvil();
  const adapter = new EvmAdapter(parseConfig({ chains: [anvilChainEntry(node.rpcUrl, usdt)] }).chains[0]!);
  const signer = new WalletSigner(() => TEST_MNEMONIC, silentLogger);
  const owner = new HdWallet(signer).derive(evmScheme(), 1, 0);
  await payFromAnvil(node, 'native', owner.address, '1', 18);
  await payFromAnvil(node, usdt, owner.address, '10', 6);

  const quote = await adapter.feeQuote();
  if (quote.kind !== 'evm') return t.fail('an EVM quote');
  const { pending } = await adapter.nonce(owner.address);
  const sent = signer.signEvm({
    chainId: ANVIL_CHAIN_ID,
    path: owner.path,
    nonce: pending,
    to: usdt,
    value: 0n,
    data: erc20TransferData(to, 4_000_000n),
    gasLimit: 100_000n,
    maxFeePerGas: quote.maxFeePerGas,
    maxPriorityFeePerGas: quote.maxPriorityFeePerGas,
  });
  t.is(await adapter.broadcast(sent.raw), sent.txid);
  // Anvil mines each transaction, but it may answer the broadcast before that block is made (a
  // loaded machine showed it in the mempool): wait while it is there, then it must be mined.
  const status = await until(
    async () => {
      const s = await adapter.sentStatus(sent);
      return s.state === 'mempool' ? null : s;
    },
    15_000,
    'the transfer out of the mempool',
  );
  if (status.state !== 'mined') return t.fail(`mined (anvil mines each transaction), not ${status.state}`);
  t.true(status.succeeded);
  const block = (await adapter.blocks(status.height, status.height))[0]!;
  t.deepEqual(
    block.transfers.map((x) => [x.asset, x.to, x.amount, x.txid]),
    [[usdt, to, 4_000_000n, sent.txid]],
  );
  t.deepEqual(
    block.spends!.map((x) => ({ txid: x.txid, from: x.from, nonce: x.nonce })),
    [{ txid: sent.txid, from: owner.address, nonce: pending }],
  );
  t.deepEqual(await adapter.nonce(owner.address), { latest: pending + 1, pending: pending + 1 });
});
