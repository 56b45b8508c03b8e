import type { Coin } from '../catalog/coins';
import { transferKey } from './transfer-recorder';
import type { NormalisedBlock, OutgoingObservation } from './types';
import { indexSpends, type WalletCoins } from './wallet-coins';

/**
 * The spends of `blocks` (a chain's, scanned up to `top`) that may take the wallet's coins
 * (WalletCoins), as the recorder takes them: it confirms each against the output or the address it
 * spends from. A spend moves the chain's native coin (a Bitcoin input, an EVM or Tron transaction).
 */
export function spendObservations(
  coins: WalletCoins,
  chainId: string,
  coinByAsset: ReadonlyMap<string, Coin>,
  blocks: NormalisedBlock[],
  top: number,
): OutgoingObservation[] {
  const native = coinByAsset.get('native');
  if (!native) return [];
  const observations: OutgoingObservation[] = [];
  for (const block of blocks)
    for (const { spend, index, addressId } of coins.maySpend(chainId, block.spends ?? []))
      observations.push({
        direction: 'outgoing',
        chainId,
        coinId: native.id,
        txid: spend.txid,
        index,
        outpoint: spend.outpoint,
        from: spend.from,
        addressId,
        nonce: spend.nonce,
        blockHeight: block.height,
        blockHash: block.hash,
        confirmations: top - block.height + 1,
      });
  return observations;
}

/** The identities (transferKey) of every transfer and spend `blocks` hold, the wallet's or not. */
export function transferKeys(blocks: NormalisedBlock[], coinByAsset: ReadonlyMap<string, Coin>): Set<string> {
  const keys = new Set<string>();
  const native = coinByAsset.get('native');
  for (const b of blocks) {
    for (const t of b.transfers) {
      const coin = coinByAsset.get(t.asset);
      if (coin) keys.add(transferKey(t.txid, coin.id, t.index, 'incoming'));
    }
    if (native) for (const { spend, index } of indexSpends(b.spends ?? [])) keys.add(transferKey(spend.txid, native.id, index, 'outgoing'));
  }
  return keys;
}
