import { randomBytes } from 'node:crypto';
import { ChainTransferEntity } from '../../src/db/entities/chain';
import { InvoiceEntity } from '../../src/db/entities/money';
import { confirmedTransferRow } from './chain-transfer-row';
import { Amount } from '../../src/shared/amount';
import { COINS } from './invoice-fixture';
import { recordTransaction } from './money-fixtures';
import { startWithdrawalFixture, type WithdrawalFixture } from './withdrawal-fixture';

export interface RefundSeed {
  fx: WithdrawalFixture;
  /** A key of the verified account with read, create_invoice and withdraw. */
  keyId: string;
  secret: string;
  coinId: string;
  /** A BTC invoice paid in full by one confirmed invoice_payment (credited to the ledger). */
  paidInvoiceId: string;
  /** A BTC invoice that received half its payer_amount, confirmed, and is `underpaid`. */
  underpaidInvoiceId: string;
}

/**
 * A merchant the refund API can serve (PRODUCT §16), for the client tests: verified, its key may
 * withdraw, its BTC balance funded beyond what the invoices received (network fees on top), and
 * two invoices whose payments are written as crediting writes them (the row and its ledger
 * credit); their status and amounts are set on the row, as the state table would compute them.
 */
export async function seedRefundable(opts: Parameters<typeof startWithdrawalFixture>[0] = {}): Promise<RefundSeed> {
  const fx = await startWithdrawalFixture(opts);
  try {
    const api = await fx.key(['read', 'create_invoice', 'withdraw']);
    await fx.fund('0.01');
    const store = fx.td.daemon.store;
    const invoice = async (orderId: string, paidShare: 'all' | 'half') => {
      const res = await api.post('/v1/invoices', { amount: '0.001', currency: 'BTC', coin_id: COINS.BTC, order_id: orderId });
      if (res.status !== 201) throw new Error(`invoice create answered ${res.status}: ${JSON.stringify(res.body)}`);
      const id = res.body.id as string;
      const due = Amount.of(res.body.payer_amount as string);
      const paid = paidShare === 'all' ? due : due.times(Amount.of('0.5'));
      await recordTransaction(store, { accountId: fx.accountId, coinId: COINS.BTC, type: 'invoice_payment', amount: paid.toString(), invoiceId: id });
      // The chain transfer the state table counts (an accepted underpayment is recomputed from it).
      const row = await store.read.findOneByOrFail(InvoiceEntity, { id });
      const chainId = fx.td.daemon.catalog.coin(COINS.BTC)!.chain_id;
      await store.write((em) =>
        em.insert(
          ChainTransferEntity,
          confirmedTransferRow({
            chain_id: chainId,
            coin_id: COINS.BTC,
            txid: randomBytes(32).toString('hex'),
            address: row.address!,
            address_id: row.address_id!,
            account_id: fx.accountId,
            purpose: 'invoice',
            amount: paid.toString(),
          }),
        ),
      );
      await store.write((em) =>
        em.update(
          InvoiceEntity,
          { id },
          {
            status: paidShare === 'all' ? 'paid' : 'underpaid',
            paid_amount: paid.toString(),
            remaining_amount: due.minus(paid).toString(),
          },
        ),
      );
      return id;
    };
    const paidInvoiceId = await invoice('refund-paid', 'all');
    const underpaidInvoiceId = await invoice('refund-underpaid', 'half');
    return { fx, keyId: api.keyId, secret: api.secret, coinId: COINS.BTC, paidInvoiceId, underpaidInvoiceId };
  } catch (e) {
    await fx.stop();
    throw e;
  }
}
