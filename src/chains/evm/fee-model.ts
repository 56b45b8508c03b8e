import { keccak256 } from 'ethers/crypto';
import type { ChainConfig, EvmFeeModel } from '../../config/schema';
import { eip1559Signed } from './eip1559';
import { erc20TransferData } from './erc20';
import { NATIVE_TRANSFER_GAS, TOKEN_TRANSFER_GAS } from './gas';

/**
 * The fee models of EVM chains (`chains[].fee_model`, docs/chains-evm.md "Fee models"): how the
 * chain prices gas, and what a transaction of the wallet takes beyond gas used × gas price. The
 * pure arithmetic is here (tested in test/unit/chains/evm/fee-model.test.ts); EvmAdapter.feeQuote
 * asks the node what each model needs.
 */
export const feeModelOf = (chain: Pick<ChainConfig, 'evm'>): EvmFeeModel => chain.evm?.fee_model ?? 'eip1559';

/** The OP-stack GasPriceOracle predeploy, whose `getL1Fee(bytes)` prices a transaction's L1 data. */
export const GAS_PRICE_ORACLE = '0x420000000000000000000000000000000000000F';
/** `getL1Fee(bytes)`. */
export const GET_L1_FEE_SELECTOR = '49948e0e';

/**
 * The L1 data fee reserved per transaction is this many times what the oracle prices now: the L1
 * base and blob fees it follows may rise before the transaction is mined, as the fee cap leaves
 * room for twice the base fee.
 */
export const L1_FEE_MARGIN = 2n;

/** Arbitrum: an estimate of gas is padded by a quarter, as the L1 price inside it may rise before the transaction is mined (unused gas is not charged). */
export const padArbitrumGas = (estimate: bigint): bigint => {
  const padded = estimate + estimate / 4n;
  return padded < NATIVE_TRANSFER_GAS ? NATIVE_TRANSFER_GAS : padded;
};

/** What a model adds to a quote: a native transfer's gas (Arbitrum) and the L1 data fee a transaction may take (OP-stack). */
export interface ModelCosts {
  /** The gas limit of a native transfer: 21,000, or on Arbitrum its padded estimate (the L1 cost inside). */
  transferGas?: bigint;
  /** OP-stack: the L1 data fee reserved for each transaction (wei), paid beside its gas. */
  l1Fee?: bigint;
}

/** The gas limit of a native transfer (sweep, top-up, payout, filler, cancel) under the quote. */
export const nativeGas = (q: ModelCosts): bigint => q.transferGas ?? NATIVE_TRANSFER_GAS;

/**
 * The gas limit of a token payout under the quote: TOKEN_TRANSFER_GAS, plus on Arbitrum twice the
 * L1 part of a native transfer's estimate (a token transfer carries 68 bytes of call data more
 * than a native one's ~110, so its L1 part is less than twice).
 */
export const tokenGas = (q: ModelCosts): bigint => TOKEN_TRANSFER_GAS + 2n * (nativeGas(q) - NATIVE_TRANSFER_GAS);

/** The L1 data fee reserved per transaction (0 but on OP-stack chains). */
export const l1Reserve = (q: ModelCosts): bigint => q.l1Fee ?? 0n;

/** The most a transaction of `gas` at fee cap `maxFeePerGas` may take: its gas at the cap and the L1 data fee reserved. */
export const maxCost = (q: ModelCosts, gas: bigint, maxFeePerGas: bigint): bigint => gas * maxFeePerGas + l1Reserve(q);

/**
 * What a withdrawal reserves for its network fee (PRODUCT §8a): its payout's gas at the fee cap,
 * and for a token the gas station's top-up of the treasury too; each transaction's L1 data fee on
 * OP-stack chains.
 */
export const withdrawalReserve = (q: ModelCosts & { maxFeePerGas: bigint }, token: boolean): bigint =>
  token ? maxCost(q, tokenGas(q), q.maxFeePerGas) + maxCost(q, nativeGas(q), q.maxFeePerGas) : maxCost(q, nativeGas(q), q.maxFeePerGas);

/**
 * What a mined transaction took from its sender, from its receipt: gas used × effective gas price,
 * plus the L1 data fee an OP-stack receipt carries (`l1Fee`; none elsewhere), whatever the model
 * configured: the receipt says what the chain took.
 */
export const receiptFee = (gasUsed: bigint, effectiveGasPrice: bigint, l1Fee: bigint | null): bigint => gasUsed * effectiveGasPrice + (l1Fee ?? 0n);

/**
 * The transaction the L1 data fee is priced on: the largest the wallet sends (an ERC-20 transfer
 * of type 2 with wide fields), signed with stand-in bytes that do not compress (the oracle prices
 * the compressed size since Fjord). What it prices is an upper bound of the wallet's own sends.
 */
export function l1FeeProbe(chainId: number): string {
  const bytes = (seed: string) => Buffer.from(keccak256(Buffer.from(seed)).slice(2), 'hex');
  const address = (seed: string) => `0x${bytes(seed).subarray(0, 20).toString('hex')}`;
  const tx = eip1559Signed(
    {
      chainId,
      nonce: 0xffffff,
      maxPriorityFeePerGas: 0xffffffffffn,
      maxFeePerGas: 0xffffffffffffn,
      gasLimit: 0xffffffn,
      to: address('coinkeep l1 fee token'),
      value: 0n,
      data: erc20TransferData(address('coinkeep l1 fee payee'), 0xffffffffffffffffffffffffn),
    },
    { r: bytes('coinkeep l1 fee r'), s: bytes('coinkeep l1 fee s'), yParity: 1 },
  );
  return tx.raw;
}

/** The call data of `getL1Fee(bytes)` for the signed transaction `raw` (hex). */
export function getL1FeeData(raw: string): string {
  const body = raw.slice(2);
  const length = body.length / 2;
  const padded = body.padEnd(Math.ceil(body.length / 64) * 64, '0');
  const word = (n: number) => n.toString(16).padStart(64, '0');
  return `0x${GET_L1_FEE_SELECTOR}${word(32)}${word(length)}${padded}`;
}
