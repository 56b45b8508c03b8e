import { address, Block, Transaction, type Network } from 'bitcoinjs-lib';
import { NodeFault, type NormalisedBlock, type NormalisedSpend, type NormalisedTransfer } from '../types';

const OP_0 = 0x00;
const OP_1 = 0x51;
const OP_DUP = 0x76;
const OP_HASH160 = 0xa9;
const OP_EQUAL = 0x87;
const OP_EQUALVERIFY = 0x88;
const OP_CHECKSIG = 0xac;

type Encoding = (script: Uint8Array, network: Network) => string;

const segwit =
  (version: number): Encoding =>
  (script, network) =>
    address.toBech32(script.subarray(2), version, network.bech32);
const P2WPKH_OR_P2WSH = segwit(0);
const P2TR = segwit(1);
const P2PKH: Encoding = (script, network) => address.toBase58Check(script.subarray(3, 23), network.pubKeyHash);
const P2SH: Encoding = (script, network) => address.toBase58Check(script.subarray(2, 22), network.scriptHash);

/**
 * How the address of a standard output script is written (bech32, base58check); null for any
 * other script (OP_RETURN, bare multisig...). Matched by shape, because bitcoinjs-lib's
 * fromOutputScript tries each type by throwing, far too slow for whole blocks.
 */
function encodingOf(script: Uint8Array): Encoding | null {
  const n = script.length;
  if (n === 22 && script[0] === OP_0 && script[1] === 20) return P2WPKH_OR_P2WSH;
  if (n === 34 && script[0] === OP_0 && script[1] === 32) return P2WPKH_OR_P2WSH;
  if (n === 34 && script[0] === OP_1 && script[1] === 32) return P2TR;
  if (n === 25 && script[0] === OP_DUP && script[1] === OP_HASH160 && script[2] === 20 && script[23] === OP_EQUALVERIFY && script[24] === OP_CHECKSIG)
    return P2PKH;
  if (n === 23 && script[0] === OP_HASH160 && script[1] === 20 && script[22] === OP_EQUAL) return P2SH;
  return null;
}

/** The address an output pays, in canonical form (bech32 lower-case, base58check); null for a script without one. */
export function outputAddress(script: Uint8Array, network: Network): string | null {
  const encoding = encodingOf(script);
  return encoding ? encoding(script, network) : null;
}

/**
 * The output script paying the address `text` (the inverse of outputAddress, and the chain's watch
 * key); null for text that is not an address of this network.
 */
export function outputScript(text: string, network: Network): Uint8Array | null {
  try {
    if (text.startsWith(`${network.bech32}1`)) {
      const { version, prefix, data } = address.fromBech32(text);
      if (prefix !== network.bech32 || version > 1) return null;
      return Uint8Array.from([version === 0 ? OP_0 : OP_1, data.length, ...data]);
    }
    const { version, hash } = address.fromBase58Check(text);
    if (version === network.pubKeyHash) return Uint8Array.from([OP_DUP, OP_HASH160, 20, ...hash, OP_EQUALVERIFY, OP_CHECKSIG]);
    if (version === network.scriptHash) return Uint8Array.from([OP_HASH160, 20, ...hash, OP_EQUAL]);
  } catch {
    // Not an address at all.
  }
  return null;
}

/**
 * One output paying an address. Its script is its watch key; the address text is built on first
 * read, because the core reads it only for the few outputs whose script is watched.
 */
class OutputTransfer implements NormalisedTransfer {
  readonly asset = 'native';
  private address: string | undefined;
  constructor(
    readonly watchKey: Uint8Array,
    private readonly encoding: Encoding,
    private readonly network: Network,
    readonly amount: bigint,
    readonly txid: string,
    readonly index: number,
  ) {}

  get to(): string {
    return (this.address ??= this.encoding(this.watchKey, this.network));
  }
}

/** 21 million BTC in satoshi: no output can carry more (consensus' MAX_MONEY). */
export const MAX_SATOSHI = 21_000_000n * 100_000_000n;

/**
 * Every output of `tx` paying an address: one transfer each (txid + vout), so two outputs to one
 * address are two. A value below zero or above all the bitcoin there is cannot come from a valid
 * chain: the node is at fault, and nothing of the transaction counts.
 */
export function transactionTransfers(tx: Transaction, network: Network, txid = tx.getId()): NormalisedTransfer[] {
  const transfers: NormalisedTransfer[] = [];
  tx.outs.forEach((out, index) => {
    if (out.value < 0n || out.value > MAX_SATOSHI) throw new NodeFault(`bitcoin node: output ${txid}:${index} has the impossible value ${out.value} sat`);
    if (out.value === 0n) return;
    const encoding = encodingOf(out.script);
    if (encoding !== null) transfers.push(new OutputTransfer(out.script, encoding, network, out.value, txid, index));
  });
  return transfers;
}

/** Display order (the RPC's) of a hash bitcoinjs-lib holds in internal byte order. */
const displayHash = (internal: Uint8Array): string => Buffer.from(internal).reverse().toString('hex');

/** The outpoints `tx` spends, one spend each; a coinbase spends none. */
function transactionSpends(tx: Transaction, txid: string, into: NormalisedSpend[]): void {
  if (tx.isCoinbase()) return;
  for (const input of tx.ins) into.push({ txid, outpoint: { txid: displayHash(input.hash), index: input.index } });
}

/** A raw block (hex, as `getblock HASH 0` returns it) at `height`, normalised. */
export function parseBlock(hex: string, height: number, network: Network): NormalisedBlock {
  const block = Block.fromHex(hex);
  const transfers: NormalisedTransfer[] = [];
  const spends: NormalisedSpend[] = [];
  for (const tx of block.transactions ?? []) {
    const txid = tx.getId();
    for (const t of transactionTransfers(tx, network, txid)) transfers.push(t);
    transactionSpends(tx, txid, spends);
  }
  return { height, hash: block.getId(), parentHash: displayHash(block.prevHash!), transfers, spends };
}

/** A raw transaction (hex, as `getrawtransaction TXID false` returns it), normalised. */
export function parseTransaction(hex: string, network: Network): { txid: string; transfers: NormalisedTransfer[] } {
  const tx = Transaction.fromHex(hex);
  const txid = tx.getId();
  return { txid, transfers: transactionTransfers(tx, network, txid) };
}
