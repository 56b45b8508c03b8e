import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { Catalog, Coin } from '../../catalog/coins';
import { NATIVE_ASSET } from '../../catalog/coins';
import { familyOf } from '../../chains/families';
import type { AddressScheme } from '../../chains/derivation';
import { tronFromHex } from '../../chains/tron/derive';
import type { TronContract } from '../../chains/tron/transaction';
import type { ChainConfig } from '../../config/schema';
import { placeholder, rawQuery } from '../../db/raw';
import type { Store } from '../../db/store';
import { Amount } from '../../shared/amount';
import type { Clock } from '../../shared/clock';
import type { Logger } from '../../shared/logger';
import { OPERATOR_BRANCH, TREASURY_INDEX } from '../address.service';
import type { HdWallet } from '../hd';
import { SignRefused, type SignPurpose, type WireBtcSpend, type WireEvmSpend, type WireTronSpend } from '../signer-protocol';

const HOUR_MS = 3600_000;
/** Withdrawal states a payout may be signed for: pending (its claim commits with the signed payout), claimed, or sent (a replacement). */
const SIGNABLE = new Set(['pending', 'processing', 'broadcast']);

/** A value leaving a key of the wallet: to whom, in which coin, how much (base units). */
interface Payment {
  to: string;
  /** The destination's derivation path, when the request says it is the wallet's. */
  path?: string;
  coin: Coin;
  amount: bigint;
}

interface ParsedPath {
  branch: number;
  keyChain: number;
  index: number;
}

/** m/purpose'/coin'/branch'/keyChain/index. */
export function parsePath(path: string): ParsedPath | null {
  const m = /^m\/\d+'\/\d+'\/(\d+)'\/([01])\/(\d+)$/.exec(path);
  if (!m) return null;
  return { branch: Number(m[1]), keyChain: Number(m[2]), index: Number(m[3]) };
}

export interface GuardDeps {
  store: Store;
  chains: readonly ChainConfig[];
  catalog: Catalog;
  wallet: HdWallet;
  /** `signer.max_per_hour`: per ticker, in the default fiat. */
  limits: Readonly<Record<string, string>>;
  defaultFiat: string;
  /** The rate of a ticker in the default fiat (throws when there is none now). */
  rate: (ticker: string) => string;
  clock: Clock;
  logger: Logger;
  /** Where what was signed toward the hourly limit is kept across restarts (one JSON line each); null: memory only. */
  journalFile: string | null;
}

interface Signed {
  withdrawalId: string;
  ticker: string;
  value: string;
  at: number;
}

/**
 * What the signer checks before it signs (PRODUCT §18): it reads the rows a request names from the
 * database itself and rebuilds what will leave the wallet from the spend it is asked to sign. Every
 * payment goes either to one of the wallet's own addresses (proved by deriving it from its stored
 * path) or, for a payout, to a named withdrawal of the paying account with exactly its destination
 * and amount; every key spent from is the paying account's (or the operator's gas station); the
 * withdrawals' values in a rolling hour stay within `signer.max_per_hour` per coin.
 */
export class SpendGuard {
  private readonly chains = new Map<string, { chain: ChainConfig; scheme: AddressScheme }>();
  private journal: Signed[] = [];

  constructor(private readonly deps: GuardDeps) {
    for (const chain of deps.chains) this.chains.set(chain.id, { chain, scheme: familyOf(chain.kind).addressScheme(chain) });
    if (deps.journalFile && existsSync(deps.journalFile)) {
      const since = deps.clock.now().getTime() - HOUR_MS;
      for (const line of readFileSync(deps.journalFile, 'utf8').split('\n')) {
        if (!line) continue;
        try {
          const s = JSON.parse(line) as Signed;
          if (s.at > since) this.journal.push(s);
        } catch {
          // A torn last line (a kill mid-write) counts for nothing.
        }
      }
    }
  }

  chainOf(chainId: string): { chain: ChainConfig; scheme: AddressScheme } {
    const c = this.chains.get(chainId);
    if (!c) throw new SignRefused('unknown_chain', `chain ${chainId} is not configured`);
    return c;
  }

  async checkBtc(chainId: string, purpose: SignPurpose, spend: WireBtcSpend): Promise<() => void> {
    const { chain } = this.chainOf(chainId);
    if (!familyOf(chain.kind).addresses.change) throw new SignRefused('unknown_chain', `${chainId} is not a Bitcoin chain`);
    const account = await this.accountBranch(purpose);
    if (spend.coins.length === 0) throw new SignRefused('bad_inputs', 'a payout spends at least one coin');
    const em = this.deps.store.read;
    const p = (i: number) => placeholder(em, i);
    for (const c of spend.coins) {
      const [row] = await rawQuery<{ account_id: string | null; amount: string; derivation_path: string }>(
        em,
        `SELECT t.account_id, t.amount, a.derivation_path FROM chain_transfers t JOIN addresses a ON a.id = t.address_id ` +
          `WHERE t.chain_id = ${p(1)} AND t.txid = ${p(2)} AND t.output_index = ${p(3)} AND t.direction = 'incoming'`,
        [chainId, c.txid, c.vout],
      );
      if (!row) throw new SignRefused('unknown_input', `input ${c.txid}:${c.vout} is not a coin the wallet received`);
      if (row.account_id !== purpose.account_id)
        throw new SignRefused('foreign_input', `input ${c.txid}:${c.vout} is not a coin of account ${purpose.account_id}`);
      if (row.derivation_path !== c.path || Amount.of(row.amount).toBaseUnits(8) !== BigInt(c.value))
        throw new SignRefused('changed_input', `input ${c.txid}:${c.vout} does not match its stored path and value`);
    }
    const native = this.nativeOf(chainId);
    const payments = spend.outputs.map((o) => ({ to: o.address, path: o.path, coin: native, amount: BigInt(o.value) }));
    return this.checkPayments(chain, purpose, account, payments);
  }

  async checkEvm(chainId: string, purpose: SignPurpose, spend: WireEvmSpend): Promise<() => void> {
    const { chain } = this.chainOf(chainId);
    if (!familyOf(chain.kind).addresses.sharedAcrossChains) throw new SignRefused('unknown_chain', `${chainId} is not an EVM chain`);
    const account = await this.accountBranch(purpose);
    this.checkFrom(spend.path, account);
    const data = spend.data && spend.data !== '0x' ? spend.data.toLowerCase().replace(/^0x/, '') : '';
    let payment: Payment;
    if (data === '') payment = { to: spend.to, coin: this.nativeOf(chainId), amount: BigInt(spend.value) };
    else {
      const coin = this.tokenOf(chainId, spend.to);
      if (!coin || BigInt(spend.value) !== 0n || !/^a9059cbb[0-9a-f]{128}$/.test(data))
        throw new SignRefused('unknown_call', 'only native transfers and token transfers of configured tokens are signed');
      payment = { to: '0x' + data.slice(8 + 24, 8 + 64), coin, amount: BigInt('0x' + data.slice(8 + 64)) };
    }
    const payments =
      payment.amount === 0n && sameEvm(payment.to, this.deps.wallet.derive(this.chainOf(chainId).scheme, ...branchIndex(spend.path)).address) ? [] : [payment];
    return this.checkPayments(chain, purpose, account, payments);
  }

  async checkTron(chainId: string, purpose: SignPurpose, spend: WireTronSpend): Promise<() => void> {
    const { chain, scheme } = this.chainOf(chainId);
    const fam = familyOf(chain.kind).addresses;
    if (!fam.treasuries || fam.sharedAcrossChains) throw new SignRefused('unknown_chain', `${chainId} is not a Tron chain`);
    const account = await this.accountBranch(purpose);
    this.checkFrom(spend.path, account);
    const owner = this.deps.wallet.derive(scheme, ...branchIndex(spend.path)).address;
    const v = spend.contract.value;
    const addr = (k: string): string => {
      const hex = String(v[k] ?? '');
      if (!/^41[0-9a-fA-F]{40}$/.test(hex)) throw new SignRefused('bad_request', `contract field ${k} is not a Tron address`);
      return tronFromHex(hex.slice(2));
    };
    if (addr('owner_address') !== owner) throw new SignRefused('foreign_input', 'the contract is not from the key it would be signed with');
    const payments = this.tronPayments(chainId, spend.contract, addr);
    if (spend.contract.type === 'FreezeBalanceV2Contract' && purpose.kind !== 'stake')
      throw new SignRefused('unknown_call', 'a stake is signed for a stake only');
    return this.checkPayments(chain, purpose, account, payments);
  }

  private tronPayments(chainId: string, contract: TronContract, addr: (k: string) => string): Payment[] {
    const v = contract.value;
    switch (contract.type) {
      case 'TransferContract':
        return [{ to: addr('to_address'), coin: this.nativeOf(chainId), amount: BigInt(String(v.amount)) }];
      case 'TriggerSmartContract': {
        const coin = this.tokenOf(chainId, addr('contract_address'));
        const data = String(v.data ?? '').toLowerCase();
        if (!coin || !/^a9059cbb[0-9a-f]{128}$/.test(data) || BigInt(String(v.call_value ?? 0)) !== 0n)
          throw new SignRefused('unknown_call', 'only transfers of configured tokens are signed');
        return [{ to: tronFromHex(data.slice(8 + 24, 8 + 64)), coin, amount: BigInt('0x' + data.slice(8 + 64)) }];
      }
      case 'DelegateResourceContract':
        // Energy lent stays the wallet's: the receiver must be a wallet address; nothing is paid.
        return [{ to: addr('receiver_address'), coin: this.nativeOf(chainId), amount: 0n }];
      case 'FreezeBalanceV2Contract':
      case 'UnDelegateResourceContract':
        return [];
      default:
        throw new SignRefused('unknown_call', `contract ${String(contract.type)} is not signed`);
    }
  }

  /**
   * Every payment to a withdrawal's destination (payout only) or to the wallet; returns what to
   * record once signed (the payout's withdrawals toward the hourly limit).
   */
  private async checkPayments(chain: ChainConfig, purpose: SignPurpose, account: number | null, payments: Payment[]): Promise<() => void> {
    const named = new Set(purpose.withdrawal_ids);
    const paid: Array<{ id: string; coin: Coin; amount: bigint }> = [];
    for (const pay of payments) {
      const own = await this.walletBranch(chain, pay.to, pay.path, account);
      if (own !== null) {
        // Change and cancels go back to the paying account's own branch (Bitcoin), sweeps and top-ups to any wallet address.
        if (familyOf(chain.kind).addresses.change && own !== account)
          throw new SignRefused('changed_destination', `output to ${pay.to} is another account's address`);
        continue;
      }
      if (purpose.kind !== 'payout') throw new SignRefused('changed_destination', `a ${purpose.kind} pays only the wallet's own addresses, not ${pay.to}`);
      const w = await this.matchWithdrawal(chain, purpose, named, pay);
      named.delete(w);
      paid.push({ id: w, coin: pay.coin, amount: pay.amount });
    }
    if (purpose.kind === 'payout' && paid.length === 0) throw new SignRefused('not_stored', 'a payout pays at least one stored withdrawal');
    return this.withinLimit(paid);
  }

  private async matchWithdrawal(chain: ChainConfig, purpose: SignPurpose, named: Set<string>, pay: Payment): Promise<string> {
    const em = this.deps.store.read;
    const p = (i: number) => placeholder(em, i);
    const ids = [...named];
    if (ids.length === 0) throw new SignRefused('not_stored', `output to ${pay.to} pays no withdrawal named by the request`);
    const rows = await rawQuery<{ id: string; account_id: string; coin_id: string; to_address: string; amount: string; status: string }>(
      em,
      `SELECT id, account_id, coin_id, to_address, amount, status FROM withdrawals WHERE id IN (${ids.map((_, i) => p(i + 1)).join(', ')})`,
      ids,
    );
    if (rows.length === 0) throw new SignRefused('not_stored', `withdrawal ${ids[0]} is not stored`);
    for (const w of rows)
      if (w.account_id !== purpose.account_id) throw new SignRefused('foreign_withdrawal', `withdrawal ${w.id} is not of account ${purpose.account_id}`);
    const same = sameAddress;
    const to = rows.filter((w) => same(w.to_address, pay.to));
    if (to.length === 0) throw new SignRefused('changed_destination', `no withdrawal named pays ${pay.to}`);
    const exact = to.find((w) => w.coin_id === pay.coin.id && Amount.of(w.amount).toBaseUnits(pay.coin.decimals) === pay.amount);
    if (!exact) throw new SignRefused('changed_amount', `no withdrawal named pays ${pay.amount} base units of ${pay.coin.ticker} to ${pay.to}`);
    if (!SIGNABLE.has(exact.status)) throw new SignRefused('not_claimable', `withdrawal ${exact.id} is ${exact.status}`);
    return exact.id;
  }

  private withinLimit(paid: Array<{ id: string; coin: Coin; amount: bigint }>): () => void {
    const now = this.deps.clock.now().getTime();
    this.journal = this.journal.filter((s) => s.at > now - HOUR_MS);
    const fresh: Signed[] = [];
    for (const w of paid) {
      const ticker = w.coin.ticker;
      if (this.journal.some((s) => s.withdrawalId === w.id)) continue; // a replacement: counted once
      const cap = this.deps.limits[ticker];
      let value = '0';
      if (cap !== undefined) {
        let rate: string;
        try {
          rate = this.deps.rate(ticker);
        } catch {
          throw new SignRefused('no_rate', `no current ${ticker} rate in ${this.deps.defaultFiat} to check the hourly limit`);
        }
        value = Amount.fromBaseUnits(w.amount, w.coin.decimals).times(rate).toString();
        const spent = [...this.journal, ...fresh].filter((s) => s.ticker === ticker).reduce((sum, s) => sum.plus(Amount.of(s.value)), Amount.zero());
        if (spent.plus(Amount.of(value)).cmp(Amount.of(cap)) > 0)
          throw new SignRefused(
            'hourly_limit',
            `withdrawal ${w.id}: ${ticker} signed in the last hour would pass signer.max_per_hour (${cap} ${this.deps.defaultFiat})`,
          );
      }
      fresh.push({ withdrawalId: w.id, ticker, value, at: now });
    }
    return () => {
      for (const s of fresh) {
        this.journal.push(s);
        if (this.deps.journalFile) appendFileSync(this.deps.journalFile, JSON.stringify(s) + '\n', { mode: 0o600 });
      }
    };
  }

  /** The paying account's wallet branch; null for the operator's own sends (no account). */
  private async accountBranch(purpose: SignPurpose): Promise<number | null> {
    if (purpose.account_id === null) return null;
    const em = this.deps.store.read;
    const [row] = await rawQuery<{ branch: number }>(em, `SELECT branch FROM wallet_branches WHERE account_id = ${placeholder(em, 1)}`, [purpose.account_id]);
    if (!row) throw new SignRefused('unknown_account', `account ${purpose.account_id} has no wallet branch`);
    return Number(row.branch);
  }

  /** A key spent from is the paying account's, or the operator's gas station. */
  private checkFrom(path: string, account: number | null): void {
    const parsed = parsePath(path);
    if (!parsed) throw new SignRefused('bad_request', `not a derivation path: ${path}`);
    if (parsed.branch !== OPERATOR_BRANCH && parsed.branch !== account) throw new SignRefused('foreign_input', `key ${path} is not of the paying account`);
  }

  /** The branch of the wallet address `address` on `chain` (proved by deriving its stored path), or null when it is not the wallet's. */
  private async walletBranch(chain: ChainConfig, address: string, path: string | undefined, account: number | null): Promise<number | null> {
    const { scheme } = this.chainOf(chain.id);
    const same = (a: string) => sameAddress(a, address);
    const derives = (p: string): number | null => {
      const parsed = parsePath(p);
      return parsed && same(this.deps.wallet.derive(scheme, parsed.branch, parsed.index, parsed.keyChain as 0 | 1).address) ? parsed.branch : null;
    };
    // A destination made in the requester's open transaction (a change address, a first treasury) is not committed yet: its path proves it.
    if (path !== undefined) {
      const branch = derives(path);
      if (branch !== null) return branch;
    }
    if (account !== null && familyOf(chain.kind).addresses.treasuries && same(this.deps.wallet.derive(scheme, account, TREASURY_INDEX, 1).address))
      return account;
    if (familyOf(chain.kind).addresses.treasuries && same(this.deps.wallet.derive(scheme, OPERATOR_BRANCH, 0).address)) return OPERATOR_BRANCH;
    const em = this.deps.store.read;
    const rows = await rawQuery<{ derivation_path: string }>(
      em,
      `SELECT derivation_path FROM addresses WHERE lower(address) = lower(${placeholder(em, 1)}) LIMIT 20`,
      [address],
    );
    for (const r of rows) {
      const branch = derives(r.derivation_path);
      if (branch !== null) return branch;
    }
    return null;
  }

  private nativeOf(chainId: string): Coin {
    const coin = this.deps.catalog.coins().find((c) => c.chain_id === chainId && c.asset === NATIVE_ASSET);
    if (!coin) throw new SignRefused('unknown_chain', `chain ${chainId} has no native coin`);
    return coin;
  }

  private tokenOf(chainId: string, contract: string): Coin | undefined {
    return this.deps.catalog.coins().find((c) => c.chain_id === chainId && c.asset !== NATIVE_ASSET && c.asset.toLowerCase() === contract.toLowerCase());
  }
}

const sameEvm = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
/**
 * Two forms of one address: EVM's checksum case aside, equal (a Bech32 address is lower case; two
 * Base58Check addresses differing in case only are, but for a 2^-32 checksum chance, not both valid).
 */
const sameAddress = sameEvm;

function branchIndex(path: string): [number, number, 0 | 1] {
  const p = parsePath(path);
  if (!p) throw new SignRefused('bad_request', `not a derivation path: ${path}`);
  return [p.branch, p.index, p.keyChain as 0 | 1];
}
