import { Catalog } from '../catalog/coins';
import type { Config } from '../config/schema';
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
  network: string;
  amount: string;
  to: string;
  txid: string;
}

/**
 * Pays an invoice from the sandbox's funded wallet on the chain of `coinId` (default: the invoice's
 * coin): what is still due unless `amount` says otherwise, then mines until confirmed.
 */
export async function payInvoice(config: Config, invoice: InvoiceToPay, opts: { amount?: string; coinId?: string }): Promise<SandboxPaymentResult> {
  if (!invoice.address || !invoice.coin_id) throw new UserError(`invoice ${invoice.id} has no coin yet: the payer picks one on the payment page first`);
  const catalog = new Catalog(config.chains, config.fiat);
  const coin = catalog.coin(opts.coinId ?? invoice.coin_id);
  if (!coin) throw new UserError(`--coin ${opts.coinId}: not a coin of the sandbox`);
  if (coin.chain_id !== catalog.coin(invoice.coin_id)?.chain_id) throw new UserError(`--coin ${opts.coinId}: not on the invoice's network`);
  const chain = config.chains.find((c) => c.id === coin.chain_id)!;
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
  return { invoice_id: invoice.id, coin_id: coin.id, ticker: coin.ticker, network: coin.network, amount: amount.toString(), to: invoice.address, txid };
}
