import { existsSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { ChainConfig } from '../config/schema';
import { TronFullNode } from '../chains/tron/full-node';
import type { SandboxChain, SandboxPayment } from './sandbox-chain';
import { TronWeb } from 'tronweb';
import { hex20, signTronTransaction, TOKEN_DECIMALS, TronNode } from './tron-node';

/**
 * The sandbox payer's key: fixed, so that `coinkeep dev pay` (another process) signs for the
 * account the stand-in funded. It holds sandbox TRX and test USDT only, on a chain no one else has.
 */
export const SANDBOX_TRON_PAYER_KEY = createHash('sha256').update('coinkeep sandbox tron payer').digest('hex');
export const SANDBOX_TRON_DECIMALS = TOKEN_DECIMALS;

/** The sandbox's Tron chain entry: TRX and the stand-in's USDT, its genesis block as the network, mined on demand so never "stalled". */
export function tronChainEntry(node: TronNode, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { options, ...rest } = extra;
  return {
    id: 'tron',
    kind: 'tron',
    full_node_url: node.url,
    confirmations: 3,
    native: { ticker: 'TRX', decimals: 6 },
    tokens: [{ ticker: 'USDT', contract: node.usdt, decimals: SANDBOX_TRON_DECIMALS }],
    options: { genesis_block_id: node.genesisId, poll_interval_ms: 1000, stall_seconds: 0, ...(options as Record<string, unknown> | undefined) },
    // The gas station stakes this much for the energy of token sweeps and payouts (about a million energy a day on the stand-in).
    sweep: { stake: String(SANDBOX_STAKE_TRX) },
    ...rest,
  };
}

/**
 * Pays from the sandbox payer as a wallet does over the node's API: the node builds the
 * transaction (`createtransaction`, `triggersmartcontract` with a fee_limit), the payer signs it
 * here and broadcasts it (`broadcasttransaction`); then the stand-in mines until it has the
 * chain's confirmations.
 */
export async function payOnTronNode(chain: ChainConfig, payment: SandboxPayment): Promise<{ txid: string }> {
  const node = new TronFullNode(chain.full_node_url!, chain.watch.rpc_timeout_ms, chain.api_key);
  const owner = '41' + hex20(TronWeb.address.fromPrivateKey(SANDBOX_TRON_PAYER_KEY) as string);
  const to = '41' + hex20(payment.to);
  type Unsigned = { txID: string; raw_data: Record<string, unknown> };
  const unsigned =
    payment.asset === 'native'
      ? await node.post<Unsigned>('createtransaction', { owner_address: owner, to_address: to, amount: Number(payment.amount) })
      : (
          await node.post<{ transaction?: Unsigned; result?: { message?: string } }>('triggersmartcontract', {
            owner_address: owner,
            contract_address: '41' + hex20(payment.asset),
            function_selector: 'transfer(address,uint256)',
            parameter: to.slice(2).padStart(64, '0') + payment.amount.toString(16).padStart(64, '0'),
            fee_limit: 100_000_000,
          })
        ).transaction;
  if (!unsigned) throw new Error('tron node triggersmartcontract: no transaction');
  const signed = signTronTransaction(unsigned.raw_data, SANDBOX_TRON_PAYER_KEY);
  if (signed.txID !== unsigned.txID) throw new Error('tron node: the transaction it built does not hash to its txID');
  const sent = await node.post<{ result?: boolean; code?: string }>('broadcasttransaction', { ...unsigned, signature: [signed.signature] });
  if (sent.result !== true) throw new Error(`tron node broadcasttransaction: ${sent.code ?? 'refused'}`);
  await mineOnTronNode(chain, Math.max(chain.confirmations, 1));
  return { txid: signed.txID };
}

/** Mines `blocks` blocks on the running stand-in through its test hook; the new tip's height. */
async function mineOnTronNode(chain: ChainConfig, blocks: number): Promise<{ height: number }> {
  const mined = await fetch(`${chain.full_node_url!.replace(/\/+$/, '')}/dev/mine`, {
    method: 'POST',
    body: JSON.stringify({ blocks }),
    signal: AbortSignal.timeout(chain.watch.rpc_timeout_ms),
  });
  const height = ((await mined.json()) as { height?: unknown }).height;
  if (typeof height !== 'number' || !Number.isInteger(height)) throw new Error('the tron node stand-in did not mine (is the sandbox running?)');
  return { height };
}

/** What the sandbox's gas station stakes for energy, and what it is given below twice that (TRX). */
const SANDBOX_STAKE_TRX = 100_000;
const SANDBOX_STATION_TRX = 200_000n;

/** Funds the chain's gas station from the sandbox payer when it holds less than it stakes (the daemon stakes it at its next pass). Whether it sent anything. */
export async function fundTronGasStation(chain: ChainConfig, gasStation: string): Promise<boolean> {
  const node = new TronFullNode(chain.full_node_url!, chain.watch.rpc_timeout_ms, chain.api_key);
  const account = await node.post<{
    balance?: number;
    frozenV2?: Array<{ type?: string; amount?: number }>;
    account_resource?: { delegated_frozenV2_balance_for_energy?: number };
  }>('getaccount', { address: gasStation, visible: true });
  const held =
    BigInt(account.balance ?? 0) +
    BigInt(account.frozenV2?.find((f) => f.type === 'ENERGY')?.amount ?? 0) +
    BigInt(account.account_resource?.delegated_frozenV2_balance_for_energy ?? 0);
  if (held >= BigInt(SANDBOX_STAKE_TRX) * 1_000_000n) return false;
  await payOnTronNode(chain, { asset: 'native', to: gasStation, amount: SANDBOX_STATION_TRX * 1_000_000n } as SandboxPayment);
  return true;
}

/** An address of the sandbox's own (a second fixed key): somewhere outside the daemon's wallet a sandbox withdrawal can pay. */
const sandboxPayoutAddress = (): string => TronWeb.address.fromPrivateKey(createHash('sha256').update('coinkeep sandbox tron payee').digest('hex')) as string;

export const tronSandbox: SandboxChain = {
  kind: 'tron',
  async start({ stateDir }) {
    const file = path.join(stateDir, 'tron-node.json');
    const node = existsSync(file) ? TronNode.load(file) : new TronNode({ payerKey: SANDBOX_TRON_PAYER_KEY });
    node.onMinedOverHttp = () => node.save(file);
    node.save(file);
    await node.listen();
    return {
      chains: [tronChainEntry(node)],
      stop: async () => {
        await node.stop();
        node.save(file);
      },
    };
  },
  pay: payOnTronNode,
  mine: mineOnTronNode,
  payoutAddress: sandboxPayoutAddress,
  fundGasStation: fundTronGasStation,
};
