import { address, Block, Transaction, type Network } from 'bitcoinjs-lib';
import type { NormalisedBlock, NormalisedTransfer } from '../types';

const OP_0 = 0x00;
const OP_1 = 0x51;
const OP_DUP = 0x76;
const OP_HASH160 = 0xa9;
const OP_EQUAL = 0x87;
const OP_EQUALVERIFY = 0x88;
const OP_CHECKSIG = 0xac;

/**
 * The address an output pays, in canonical form (bech32 lower-case, base58check), for the standard
 * script types; null for any other script (OP_RETURN, bare multisig...). Matched by shape, because
 * bitcoinjs-lib's fromOutputScript tries each type by throwing, far too slow for whole blocks.
 */
export function outputAddress(script: Uint8Array, network: Network): string | null {
  const n = script.length;
  if (n === 22 && script[0] === OP_0 && script[1] === 20) return address.toBech32(script.subarray(2), 0, network.bech32);
  if (n === 34 && script[0] === OP_0 && script[1] === 32) return address.toBech32(script.subarray(2), 0, network.bech32);
  if (n === 34 && script[0] === OP_1 && script[1] === 32) return address.toBech32(script.subarray(2), 1, network.bech32);
  if (n === 25 && script[0] === OP_DUP && script[1] === OP_HASH160 && script[2] === 20 && script[23] === OP_EQUALVERIFY && script[24] === OP_CHECKSIG)
    return address.toBase58Check(script.subarray(3, 23), network.pubKeyHash);
  if (n === 23 && script[0] === OP_HASH160 && script[1] === 20 && script[22] === OP_EQUAL) return address.toBase58Check(script.subarray(2, 22), network.scriptHash);
  return null;
}

/** Every output of `tx` paying an address: one transfer each (txid + vout), so two outputs to one address are two. */
export function transactionTransfers(tx: Transaction, network: Network, txid = tx.getId()): NormalisedTransfer[] {
  const transfers: NormalisedTransfer[] = [];
  tx.outs.forEach((out, index) => {
    if (out.value <= 0n) return;
    const to = outputAddress(out.script, network);
    if (to !== null) transfers.push({ asset: 'native', to, amount: out.value, txid, index });
  });
  return transfers;
}

/** Display order (the RPC's) of a hash bitcoinjs-lib holds in internal byte order. */
const displayHash = (internal: Uint8Array): string => Buffer.from(internal).reverse().toString('hex');

/** A raw block (hex, as `getblock HASH 0` returns it) at `height`, normalised. */
export function parseBlock(hex: string, height: number, network: Network): NormalisedBlock {
  const block = Block.fromHex(hex);
  return {
    height,
    hash: block.getId(),
    parentHash: displayHash(block.prevHash!),
    transfers: (block.transactions ?? []).flatMap((tx) => transactionTransfers(tx, network)),
  };
}

/** A raw transaction (hex, as `getrawtransaction TXID false` returns it), normalised. */
export function parseTransaction(hex: string, network: Network): { txid: string; transfers: NormalisedTransfer[] } {
  const tx = Transaction.fromHex(hex);
  const txid = tx.getId();
  return { txid, transfers: transactionTransfers(tx, network, txid) };
}
