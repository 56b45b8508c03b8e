import type { EntityManager } from 'typeorm';
import type { Catalog } from '../catalog/coins';
import type { GasStationStatus } from '../chains/evm/payouts/evm-chain-payouts';
import type { ChainReader, ChainSender, FeeQuote, TransferHandler } from '../chains/types';
import type { ChainConfig } from '../config/schema';
import type { AddressRow, ChainTransferRow } from '../db/entities/chain';
import type { Sealer } from '../db/seal';
import type { Store } from '../db/store';
import type { MoneyMovement } from '../money/money-movement';
import type { Clock } from '../shared/clock';
import type { Logger } from '../shared/logger';
import type { AddressAllocator } from '../wallet/allocator';
import type { RemoteSigner } from '../wallet/signer-client';
import type { FeeCeiling } from './fee-ceiling';
import type { PayoutRail } from './rail';

/** What a withdrawal reserves for its network fee, priced by a payout rail: base units of the chain's native coin. */
export type NetworkCost = (req: { accountId: string; coinId: string; to: string | null; amount: bigint; quote: FeeQuote }) => Promise<bigint>;

/** A payout rail as wired, with the family's pricing of a withdrawal's network fee where it has one. */
export interface WiredRail {
  rail: PayoutRail;
  networkCost?: NetworkCost;
}

/** One chain's own sends (an account family's): the pass that follows, plans and sends them, and its gas station. */
export interface ChainSends {
  readonly chainId: string;
  readonly gasStation: { address: string; path: string };
  pass(signal?: AbortSignal): Promise<void>;
  status(): GasStationStatus;
}

export interface OwnSendsDeps {
  chain: ChainConfig;
  /** The chain's node as the chain core holds it: a family's own adapter, or a test's stand-in. */
  node: ChainSender | null;
  store: Store;
  catalog: Catalog;
  signer: RemoteSigner;
  sealer: Sealer;
  money: MoneyMovement;
  /** The chain's gas station and the accounts' treasuries (AddressService). */
  addresses: {
    gasStation(chainId: string): { address: string; path: string };
    treasury(em: EntityManager, accountId: string, chainId: string): Promise<AddressRow>;
  };
  ceiling: FeeCeiling;
  clock: Clock;
  logger: Logger;
}

/** An account family's chain wired: its sends, the job name that runs them, and its payout rail. */
export interface OwnSends extends WiredRail {
  sends: ChainSends;
  /** The name of the job that runs `sends.pass`. */
  job: string;
  /** Tells the wallet's own movements that are no payment (the gas station's top-ups) from payments. */
  screen: (em: EntityManager, transfer: ChainTransferRow) => Promise<boolean>;
  /** The handler of the wallet's own spends, when the sends follow them (a final send reorganised away). */
  outgoing?: TransferHandler;
}

export interface RailDeps {
  chain: ChainConfig;
  node: ChainReader & ChainSender;
  store: Store;
  signer: Pick<RemoteSigner, 'signBitcoin'>;
  /** Change addresses. */
  addresses: AddressAllocator;
  ceiling: FeeCeiling;
  clock: Clock;
}

/**
 * The money-moving half of a chain family (src/chains/<kind>/payouts/family-payouts.ts), found by
 * kind in src/chains/payout-families.ts. An account family (EVM, Tron) has its own sends, wired at
 * start whether payouts are enabled or not (sweeps run anyway), and its rail comes with them; a
 * UTXO family's rail is made with the payout worker only.
 */
export interface FamilyPayouts {
  /** Null when the chain's node is not this family's adapter (a test's stand-in that cannot send). */
  ownSends?(deps: OwnSendsDeps): OwnSends | null;
  rail?(deps: RailDeps): WiredRail;
}
