import { Catalog } from '../catalog/coins';
import type { ChainConfig, Config } from '../config/schema';
import { Amount } from '../shared/amount';
import { UserError } from '../shared/errors';
import { SANDBOX_CHAINS } from './chains';

/** What `coinkeep dev pay` needs of an invoice (the admin API's invoice view). */
export interface InvoiceToPay {
  id: string;
  status: string;
  coin_id: string | null;
  address: string | null;
  payer_amount: string | null;
  remaining_amount: string | null;
}

export interface SandboxPaymentResult {
  invoice_id: string;
  coin_id: string;
  ticker: string;
  /** Where it was paid. */
  network: string;
  /** The invoice's own network and coin: another than `network` or `coin_id` makes the payment a stray (PRODUCT §17). */
  invoice_network: string;
  invoice_coin_id: string;
  amount: string;
  to: string;
  txid: string;
}

/**
 * Pays an invoice from the sandbox's funded wallet: on `network` (default: the invoice's own), with
 * `coinId` (default: the invoice's coin, or the coin of the same ticker on the network named), what
 * is still due unless `amount` says otherwise, then mines until confirmed. An EVM invoice's address
 * is the same on every EVM chain, so it can be paid on another one: what a payer who picked the
 * wrong network does.
 */
export async function payInvoice(
  config: Config,
  invoice: InvoiceToPay,
  opts: { amount?: string; coinId?: string; network?: string },
): Promise<SandboxPaymentResult> {
  if (!invoice.address || !invoice.coin_id) throw new UserError(`invoice ${invoice.id} has no coin yet: the payer picks one on the payment page first`);
  const catalog = new Catalog(config.chains, config.fiat);
  const invoiceCoin = catalog.coin(invoice.coin_id);
  if (!invoiceCoin) throw new UserError(`invoice ${invoice.id} is in a coin the sandbox does not have (${invoice.coin_id})`);
  const chain = payingChain(config, invoiceCoin.chain_id, opts.network);
  let coin;
  if (opts.coinId !== undefined) {
    coin = catalog.coin(opts.coinId);
    if (!coin) throw new UserError(`--coin ${opts.coinId}: not a coin of the sandbox`);
    if (coin.chain_id !== chain.id)
      throw new UserError(opts.network === undefined ? `--coin ${opts.coinId}: not on the invoice's network` : `--coin ${opts.coinId}: not on ${chain.id}`);
  } else {
    coin = catalog.coins().find((c) => c.chain_id === chain.id && c.ticker === invoiceCoin.ticker);
    if (!coin) {
      const there = catalog.coins().filter((c) => c.chain_id === chain.id);
      throw new UserError(`${chain.id} has no ${invoiceCoin.ticker}: pay with --coin, one of ${there.map((c) => `${c.id} (${c.ticker})`).join(', ')}`);
    }
  }
  const family = SANDBOX_CHAINS.find((f) => f.kind === chain.kind);
  if (!family) throw new UserError(`the sandbox has no ${chain.kind} node to pay from`);
  const due = invoice.remaining_amount && invoice.remaining_amount !== '0' ? invoice.remaining_amount : invoice.payer_amount!;
  let amount: Amount;
  try {
    amount = Amount.parse(opts.amount ?? due, { field: 'amount', decimals: coin.decimals });
  } catch {
    throw new UserError(`--amount must be a positive decimal with at most ${coin.decimals} decimals`);
  }
  if (amount.toBaseUnits(coin.decimals) <= 0n) throw new UserError('--amount must be more than 0');
  const { txid } = await family.pay(chain, { asset: coin.asset, to: invoice.address, amount: amount.toBaseUnits(coin.decimals) });
  return {
    invoice_id: invoice.id,
    coin_id: coin.id,
    ticker: coin.ticker,
    network: coin.network,
    invoice_network: invoiceCoin.network,
    invoice_coin_id: invoiceCoin.id,
    amount: amount.toString(),
    to: invoice.address,
    txid,
  };
}

/**
 * The chain `network` names (default: the invoice's). Only a chain of the invoice's family can
 * receive at its address (an EVM address on any EVM chain); an unknown name or one of another
 * family is an error naming the networks it could be.
 */
function payingChain(config: Config, invoiceChainId: string, network: string | undefined): ChainConfig {
  const own = config.chains.find((c) => c.id === invoiceChainId)!;
  if (network === undefined) return own;
  const chain = config.chains.find((c) => c.id === network);
  const sameFamily = config.chains.filter((c) => c.kind === own.kind).map((c) => c.id);
  if (!chain) throw new UserError(`--network ${network}: not a network of the sandbox; its networks are ${config.chains.map((c) => c.id).join(', ')}`);
  if (chain.kind !== own.kind)
    throw new UserError(`--network ${network}: the invoice's address is on ${own.id} (${own.kind}); it can be paid on ${sameFamily.join(', ')}`);
  return chain;
}
