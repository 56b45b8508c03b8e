/**
 * PRODUCT §14: a payout fails on a node's refusal only when the refusal is about the transaction
 * itself. What each family's node answers to a broadcast means, as the real nodes word it (Bitcoin
 * Core, geth / erigon / Besu / Nethermind and hosted endpoints, java-tron), and the Bitcoin adapter
 * turning those answers into a txid, TransactionRefused or a plain error.
 */
import test from 'ava';
import { Transaction } from 'bitcoinjs-lib';
import { BtcAdapter } from '../../../src/chains/btc/btc-adapter';
import { btcBroadcastAnswer } from '../../../src/chains/btc/refusal';
import { BitcoinRpc, BitcoinRpcError, type RpcOutcome } from '../../../src/chains/btc/rpc';
import { evmBroadcastAnswer } from '../../../src/chains/evm/refusal';
import { tronBroadcastAnswer } from '../../../src/chains/tron/refusal';
import { TransactionRefused } from '../../../src/chains/types';
import { parseConfig } from '../../../src/config/schema';

test('Bitcoin Core: already in its chain or mempool is known; a reject reason about the transaction is refused; missing inputs, conflicts, unpaid replacements, a full mempool, a warming node and no answer prove nothing', (t) => {
  t.is(btcBroadcastAnswer(-27, 'Transaction already in block chain'), 'known');
  t.is(btcBroadcastAnswer(-27, 'Transaction outputs already in utxo set'), 'known');
  t.is(btcBroadcastAnswer(-26, 'txn-already-in-mempool'), 'known');
  t.is(btcBroadcastAnswer(-26, 'txn-already-known'), 'known');
  for (const [code, message] of [
    [-26, 'scriptpubkey'],
    [-26, 'dust'],
    [-26, 'tx-size'],
    [-26, 'min relay fee not met, 100 < 141'],
    [-26, 'non-mandatory-script-verify-flag (Signature must be zero for failed CHECK(MULTI)SIG operation)'],
    [-26, 'mandatory-script-verify-flag-failed (Script evaluated without error but finished with a false/empty top stack element)'],
    [-26, 'bad-txns-in-belowout'],
    [-22, 'TX decode failed'],
    [-25, 'max-fee-exceeded'],
    [-25, 'Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)'],
  ] as const) {
    t.is(btcBroadcastAnswer(code, message), 'refused', `${code} ${message}`);
  }
  for (const [code, message] of [
    [-25, 'bad-txns-inputs-missingorspent'],
    [-25, 'Missing inputs'],
    [-26, 'txn-mempool-conflict'],
    [-26, 'insufficient fee, rejecting replacement 1f00, less fees than conflicting txs; 0.00001 < 0.00002'],
    [-26, 'mempool full'],
    [-26, 'mempool min fee not met, 120 < 300'],
    [-26, 'too-long-mempool-chain, too many descendants for tx 1f00 [limit: 25]'],
    [-28, 'Loading block index...'],
    [-9, 'Bitcoin Core is not connected!'],
  ] as const) {
    t.is(btcBroadcastAnswer(code, message), 'unsure', `${code} ${message}`);
  }
  t.is(btcBroadcastAnswer(null, 'timed out after 10000 ms'), 'unsure');
  t.is(btcBroadcastAnswer(null, 'scriptpubkey'), 'unsure', "an error that is not the node's answer proves nothing");
});

test('EVM nodes: already known is known; a signature, chain id, gas or fee-cap refusal is refused; nonce too low, underpriced, insufficient funds, a base fee above the cap, rate limits and transport errors prove nothing', (t) => {
  for (const m of ['already known', 'AlreadyKnown', 'Known transaction', 'transaction already imported']) t.is(evmBroadcastAnswer(true, m), 'known', m);
  for (const m of [
    'invalid sender',
    'intrinsic gas too low',
    'exceeds block gas limit',
    'max priority fee per gas higher than max fee per gas',
    'transaction type not supported',
    'invalid chain id for signer',
    'only replay-protected (EIP-155) transactions allowed over RPC',
    'rlp: expected input list for types.DynamicFeeTx',
    'tx fee (1.20 ether) exceeds the configured cap (1.00 ether)',
  ]) {
    t.is(evmBroadcastAnswer(true, m), 'refused', m);
  }
  for (const m of [
    'nonce too low',
    'replacement transaction underpriced',
    'could not replace existing tx',
    'transaction underpriced',
    'insufficient funds for gas * price + value',
    'max fee per gas less than block base fee: address 0x00, maxFeePerGas: 1 baseFee: 7',
    'txpool is full',
    'transaction indexing is in progress',
    'Your app has exceeded its compute units per second capacity',
    'daily request count exceeded, request rate limited',
  ]) {
    t.is(evmBroadcastAnswer(true, m), 'unsure', m);
  }
  t.is(evmBroadcastAnswer(false, 'evm node eth_sendRawTransaction: invalid sender'), 'unsure', "only the node's own answer can refuse");
  t.is(evmBroadcastAnswer(false, 'evm node eth_sendRawTransaction: already known'), 'known');
});

test('java-tron: DUP_TRANSACTION_ERROR is known; a bad signature, reference block, size or expiration is refused; SERVER_BUSY, NO_CONNECTION, NOT_ENOUGH_EFFECTIVE_CONNECTION, BLOCK_UNSOLIDIFIED and contract checks prove nothing', (t) => {
  t.is(tronBroadcastAnswer({ result: true }), 'known');
  t.is(tronBroadcastAnswer({ code: 'DUP_TRANSACTION_ERROR' }), 'known');
  for (const code of ['SIGERROR', 'TAPOS_ERROR', 'TOO_BIG_TRANSACTION_ERROR', 'TRANSACTION_EXPIRATION_ERROR'])
    t.is(tronBroadcastAnswer({ result: false, code }), 'refused', code);
  for (const code of [
    'SERVER_BUSY',
    'NO_CONNECTION',
    'NOT_ENOUGH_EFFECTIVE_CONNECTION',
    'BLOCK_UNSOLIDIFIED',
    'CONTRACT_VALIDATE_ERROR',
    'CONTRACT_EXE_ERROR',
    'BANDWITH_ERROR',
    'OTHER_ERROR',
  ]) {
    t.is(tronBroadcastAnswer({ result: false, code }), 'unsure', code);
  }
  t.is(tronBroadcastAnswer({}), 'unsure');
});

/** A Bitcoin node that answers every call with one error (or with a txid), without I/O. */
class Answering extends BitcoinRpc {
  constructor(private readonly outcome: RpcOutcome) {
    super('http://127.0.0.1:9/', 1000);
  }
  override async batch(): Promise<RpcOutcome[]> {
    return [this.outcome];
  }
}

test("the Bitcoin adapter answers a txid for a transaction the node holds, throws TransactionRefused for a refusal and the node's own error otherwise", async (t) => {
  const chain = parseConfig({ chains: [{ id: 'bitcoin', kind: 'btc', network: 'regtest', rpc_url: 'http://127.0.0.1:9/', confirmations: 1 }] }).chains[0]!;
  const tx = new Transaction();
  tx.addInput(Buffer.alloc(32, 1), 0);
  tx.addOutput(Buffer.from('0014' + '11'.repeat(20), 'hex'), 10_000n);
  const send = (outcome: RpcOutcome) => new BtcAdapter(chain, new Answering(outcome)).broadcast(tx.toHex());
  const error = (code: number | null, message: string): RpcOutcome => ({ ok: false, error: new BitcoinRpcError('sendrawtransaction', code, message) });
  t.is(await send({ ok: true, result: tx.getId() }), tx.getId());
  t.is(await send(error(-27, 'Transaction already in block chain')), tx.getId());
  const refused = await t.throwsAsync(send(error(-26, 'scriptpubkey')));
  t.true(refused instanceof TransactionRefused);
  t.regex(refused!.message, /scriptpubkey/);
  const unsure = await t.throwsAsync(send(error(-25, 'bad-txns-inputs-missingorspent')));
  t.true(unsure instanceof BitcoinRpcError && !(unsure instanceof TransactionRefused));
  const down = await t.throwsAsync(send(error(null, 'timed out after 1000 ms')));
  t.false(down instanceof TransactionRefused);
});
