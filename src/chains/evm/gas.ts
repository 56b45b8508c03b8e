/** Gas of a plain value transfer between accounts without code. */
export const NATIVE_TRANSFER_GAS = 21_000n;

/**
 * The gas limit of a token payout: an ERC-20 `transfer` to a holder with no balance yet costs
 * about 52,000 on common tokens; unused gas is not charged, so the limit leaves room for tokens
 * that do more.
 */
export const TOKEN_TRANSFER_GAS = 100_000n;
