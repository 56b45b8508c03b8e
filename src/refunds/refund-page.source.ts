/**
 * What the payer's refund page (PRODUCT §16, GET /pay/{id}/refund/{token}) reads and does, given
 * the id of its path (an invoice id, or a static-address deposit's transaction id) and the link's
 * token. The refund service implements it; the checkout routes only call it.
 */
export interface RefundPageSource {
  /** The refund the link is for, as the payer sees it; null when the id and token name none (404). */
  view(pathId: string, token: string): Promise<RefundPageView | null>;
  /**
   * Checks an address for the refund's coin and network without keeping it: the address as it will
   * be used, and the network it is on, shown back to the payer before it is final. Throws ApiError
   * 422 `address_refused` or `validation_error`.
   */
  check(pathId: string, token: string, address: string): Promise<{ to_address: string; network: string; network_name: string }>;
  /**
   * Sets the refund's address, once: the refund then goes on as a withdrawal. Throws ApiError 409
   * `conflict` (`details.reason: refund_not_awaiting_address`) or 422 `address_refused`.
   */
  provide(pathId: string, token: string, address: string): Promise<RefundPageView>;
}

/** A refund as its payer sees it: nothing of the account but its name. */
export type RefundPageView = {
  status:
    | 'awaiting_address'
    | 'pending'
    | 'review'
    | 'awaiting_approval'
    | 'processing'
    | 'broadcast'
    | 'completed'
    | 'failed'
    | 'rejected'
    | 'cancelled'
    | 'expired';
  amount: string;
  ticker: string;
  network: string;
  network_name: string;
  network_fee_paid_by: 'merchant' | 'payer';
  to_address: string | null;
  txid: string | null;
  expires_at: string | null;
  merchant_name?: string | null;
};
