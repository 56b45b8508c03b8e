/**
 * The signer's socket protocol (PRODUCT §18, docs/custody.md): newline-delimited JSON over a Unix
 * socket, one request per line, answered by one line with the same `id`. Amounts are decimal
 * strings of base units; nothing here is secret (public keys, unsigned fields, signed bytes).
 */
import type { TronContract, TronRefBlock } from '../chains/tron/transaction';

/** What a signature is for: the signer reads these rows itself and checks the spend against them. */
export interface SignPurpose {
  /** A payout (`payout`, its cancel `cancel`), or a send of the wallet's own (EVM/Tron send kinds: sweep, topup, filler, stake, delegate, undelegate). */
  kind: string;
  /** The paying account (null: the operator's gas station). */
  account_id: string | null;
  /** The withdrawals a payout pays (stored rows of `account_id`). */
  withdrawal_ids: string[];
}

export interface WireBtcSpend {
  coins: Array<{ txid: string; vout: number; value: string; path: string }>;
  /** `path`: an output to the wallet's own key (change, a cancel), which the signer derives to check. */
  outputs: Array<{ address: string; value: string; path?: string }>;
  sequence?: number;
}

export interface WireEvmSpend {
  path: string;
  nonce: number;
  to: string;
  value: string;
  data?: string;
  gas_limit: string;
  max_fee_per_gas: string;
  max_priority_fee_per_gas: string;
  legacy?: boolean;
}

export interface WireTronSpend {
  path: string;
  contract: TronContract;
  ref: TronRefBlock;
  expires_in_ms: number;
  fee_limit?: string;
}

export type SignerRequest =
  | { id: number; op: 'hello' }
  | { id: number; op: 'branch_keys'; paths: string[] }
  | { id: number; op: 'sign_btc'; chain_id: string; purpose: SignPurpose; spend: WireBtcSpend }
  | { id: number; op: 'sign_evm'; chain_id: string; items: Array<{ purpose: SignPurpose; spend: WireEvmSpend }> }
  | { id: number; op: 'sign_tron'; chain_id: string; purpose: SignPurpose; spend: WireTronSpend };

export type SignerOp = SignerRequest['op'];

export interface SignerHello {
  fingerprint: string;
  pid: number;
}

export interface WireBranchKey {
  path: string;
  public_key: string;
  chain_code: string;
}

export type SignerAnswer =
  { id: number; ok: true; result: unknown } | { id: number; ok: false; error: { code: 'refused' | 'bad_request' | 'internal'; reason: string } };

/** The signer refused to sign (the spend does not match its rows, or its limit): the payout waits and is built again. */
export class SignRefused extends Error {
  constructor(
    readonly code: string,
    readonly reason: string,
  ) {
    super(`the signer refused: ${reason}`);
    this.name = 'SignRefused';
  }
}

/** The signer is not reachable (down, restarting, or not started): payouts wait. */
export class SignerUnavailable extends Error {
  constructor(reason: string) {
    super(`the signer is not available: ${reason}`);
    this.name = 'SignerUnavailable';
  }
}

/** The most a line may hold (a batch of sweeps, or a payout of many coins). */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;
