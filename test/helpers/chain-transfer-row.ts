import { coinId } from '../../src/catalog/coins';
import type { ChainTransferRow } from '../../src/db/entities/chain';
import { newId } from '../../src/shared/ids';

/**
 * A confirmed incoming ETH transfer to an invoice address, as a test stores or hands one; `over`
 * sets what the test cares about, `now` every timestamp.
 */
export function confirmedTransferRow(over: Partial<ChainTransferRow> = {}, now = new Date().toISOString()): ChainTransferRow {
  const id = over.id ?? newId();
  return {
    id,
    chain_id: 'ethereum',
    coin_id: coinId('ethereum', 'native'),
    txid: `0x${id.replace(/-/g, '')}`,
    output_index: 0,
    direction: 'incoming',
    purpose: 'invoice',
    address: '0x0000000000000000000000000000000000000001',
    address_id: newId(),
    account_id: newId(),
    amount: '1',
    spent_transfer_id: null,
    nonce: null,
    block_height: 10,
    block_hash: '0xabc',
    confirmations: 3,
    status: 'confirmed',
    seen_at: now,
    confirmed_at: now,
    reverted_at: null,
    created_at: now,
    updated_at: now,
    ...over,
  };
}
