import { NATIVE_ASSET, type Catalog, type Coin } from '../catalog/coins';
import { networkLabel, type NetworkLabel } from '../catalog/networks';
import type { ChainConfig } from '../config/schema';
import type { InvoiceRow } from '../db/entities/money';
import { placeholder, rawQuery } from '../db/raw';
import type { Store } from '../db/store';
import type { InvoiceService } from '../invoices/invoice.service';
import type { RateEngine } from '../rates/engine';
import type { Clock } from '../shared/clock';
import { ApiError, notFound } from '../shared/errors';
import { Amount } from '../shared/amount';
import { paymentUri } from './payment-uri';

export interface PayerCoin {
  coin_id: string;
  ticker: string;
  name: string;
  /** The chain's config id, as the API calls it. */
  network: string;
  /** The network's name for people ("Tron", "Base"): what the page says to send on. */
  network_name: string;
  /** A token's standard where payers know one ("TRC-20", "ERC-20", "BEP-20"); null for a native coin or a network without one. */
  token_standard: string | null;
}

/**
 * An invoice as its payer sees it (GET /pay/{id}/status): what paying needs and nothing else of
 * the merchant's; never metadata, webhook_url, order_id or account details beyond its name.
 */
export interface PayerView {
  id: string;
  status: InvoiceRow['status'];
  merchant: string;
  amount: string;
  currency: string;
  coin: PayerCoin | null;
  address: string | null;
  payer_amount: string | null;
  paid_amount: string;
  remaining_amount: string;
  late_payment: boolean;
  /** While pending: the most confirmations a payment has so far, and how many the chain needs. */
  confirmations: { seen: number; needed: number } | null;
  ttl_expires_at: string;
  return_url: string | null;
  /** Without a coin: the coins the payer can choose, each with an informative approximate amount. */
  choices: Array<PayerCoin & { approx_amount: string | null }>;
  /** With a coin and an address: what a wallet scans (BIP21, EIP-681, or the address). */
  payment_uri: string | null;
}

/** How long a view is served from memory: a payer's status polls cost one database read a second per invoice. */
const CACHE_MS = 1000;
/** Bound of the cache: past it, it is emptied (every entry is at most a second old anyway). */
const CACHE_MAX = 10_000;

/** A view with what the page itself needs besides: the origins that may frame it. */
export interface PayerPage {
  view: PayerView;
  frameAncestors: string[];
}

/** The payment page's reads and the payer's coin choice (PRODUCT §11). */
export class CheckoutService {
  private readonly cache = new Map<string, { at: number; page: PayerPage | null }>();
  private readonly chains: Map<string, ChainConfig>;
  private readonly labels: Map<string, NetworkLabel>;

  constructor(
    private readonly deps: { store: Store; catalog: Catalog; rates: RateEngine; invoices: InvoiceService; chains: readonly ChainConfig[]; clock: Clock },
  ) {
    this.chains = new Map(deps.chains.map((c) => [c.id, c]));
    this.labels = new Map(deps.chains.map((c) => [c.id, networkLabel(c)]));
    // A committed change of an invoice drops its cached view: the next poll reads the change.
    deps.invoices.changes.watchAll((id) => {
      this.epoch++;
      this.cache.delete(id);
    });
  }

  /** Counts the changes told (InvoiceChanges): a read begun before one is not cached after it. */
  private epoch = 0;

  /** The payer's view read now from the database (not from the cache), and cached; null for an id that is no invoice. */
  async fresh(id: string): Promise<PayerView | null> {
    const epoch = this.epoch;
    const page = await this.read(id);
    if (epoch === this.epoch) this.remember(id, this.deps.clock.now().getTime(), page);
    return page?.view ?? null;
  }

  /** A coin as the payer sees it: the network named for people beside the config's id. */
  private payerCoin(c: Coin): PayerCoin {
    const label = this.labels.get(c.chain_id) ?? { name: c.network, token_standard: null };
    return {
      coin_id: c.id,
      ticker: c.ticker,
      name: c.name,
      network: c.network,
      network_name: label.name,
      token_standard: c.asset === NATIVE_ASSET ? null : label.token_standard,
    };
  }

  /** The payer's view of an invoice (at most a second old); 404 for an id that is no invoice. */
  async view(id: string): Promise<PayerView> {
    return (await this.page(id)).view;
  }

  /** The view and the invoice's account's embedding origins, at most a second old. */
  async page(id: string): Promise<PayerPage> {
    const now = this.deps.clock.now().getTime();
    const hit = this.cache.get(id);
    if (hit && now - hit.at < CACHE_MS) return hit.page ?? Promise.reject(notFound('invoice'));
    const epoch = this.epoch;
    const page = await this.read(id);
    if (epoch === this.epoch) this.remember(id, now, page);
    if (!page) throw notFound('invoice');
    return page;
  }

  /** POST /pay/{id}/coin: fixes the coin through the invoice service (the one code path of creation). */
  async chooseCoin(id: string, coinId: string): Promise<PayerView> {
    await this.deps.invoices.chooseCoin(id, coinId);
    const page = await this.read(id);
    this.remember(id, this.deps.clock.now().getTime(), page);
    return page!.view;
  }

  /** The invoice with its account's name and embedding origins, in one query (the public routes' one database read). */
  private async read(id: string): Promise<PayerPage | null> {
    const em = this.deps.store.read;
    const rows = await rawQuery<InvoiceRow & { merchant_name: string; embed_origins: string | null }>(
      em,
      'SELECT i.*, a.name AS merchant_name, e.allowed_origins AS embed_origins FROM invoices i JOIN accounts a ON a.id = i.account_id ' +
        `LEFT JOIN embed_origins e ON e.account_id = i.account_id WHERE i.id = ${placeholder(em, 1)}`,
      [id],
    );
    const r = rows[0];
    if (!r) return null;
    const { merchant_name, embed_origins, ...row } = r;
    return { view: await this.present(row, merchant_name), frameAncestors: embed_origins === null ? [] : (JSON.parse(embed_origins) as string[]) };
  }

  private remember(id: string, at: number, page: PayerPage | null): void {
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(id, { at, page });
  }

  private async present(row: InvoiceRow, merchant: string): Promise<PayerView> {
    const { catalog } = this.deps;
    const coin = row.coin_id ? catalog.coin(row.coin_id) : undefined;
    return {
      id: row.id,
      status: row.status,
      merchant,
      amount: row.amount,
      currency: row.currency,
      coin: coin ? this.payerCoin(coin) : null,
      address: row.address,
      payer_amount: row.payer_amount,
      paid_amount: row.paid_amount,
      remaining_amount: row.remaining_amount,
      late_payment: Boolean(row.late_payment),
      confirmations: row.status === 'pending' && coin ? await this.confirmations(row, coin) : null,
      ttl_expires_at: row.ttl_expires_at,
      return_url: row.return_url,
      choices:
        coin || row.status !== 'new' ? [] : this.deps.invoices.coinChoices(row).map((c) => ({ ...this.payerCoin(c), approx_amount: this.approx(row, c) })),
      payment_uri:
        coin && row.address && row.payer_amount
          ? paymentUri(coin, row.address, row.remaining_amount !== '0' ? row.remaining_amount : row.payer_amount, this.chains.get(coin.chain_id)?.chain_id)
          : null,
    };
  }

  private async confirmations(row: InvoiceRow, coin: Coin): Promise<{ seen: number; needed: number }> {
    const em = this.deps.store.read;
    const rows = await rawQuery<{ confirmations: number | null }>(
      em,
      `SELECT MAX(confirmations) AS confirmations FROM chain_transfers WHERE address_id = ${placeholder(em, 1)} AND coin_id = ${placeholder(em, 2)} AND direction = 'incoming' AND status = 'seen'`,
      [row.address_id, coin.id],
    );
    return { seen: Number(rows[0]?.confirmations ?? 0), needed: this.chains.get(coin.chain_id)?.confirmations ?? 1 };
  }

  /** The invoice's amount in this coin at today's rate, for the choice only (the rate is locked when chosen). */
  private approx(row: InvoiceRow, coin: Coin): string | null {
    if (row.currency === coin.ticker) return row.amount;
    if (!this.deps.catalog.fiats().some((f) => f.code === row.currency)) return null;
    try {
      return Amount.of(row.amount).div(this.deps.rates.rate(coin.ticker, row.currency).rate, coin.decimals, 'up').toString();
    } catch (err) {
      if (err instanceof ApiError) return null;
      throw err;
    }
  }
}
