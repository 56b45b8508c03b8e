import { id } from 'ethers';

/** topic0 of an ERC-20 (and TRC-20) `Transfer(address indexed from, address indexed to, uint256 value)`, 0x-prefixed. */
export const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');

/**
 * No real amount reaches 2^128 base units (3.4e20 ETH at 18 decimals; a token's supply is bounded
 * by what its contract mints, and reading each totalSupply would cost a call): a value above it
 * comes from a faulty node.
 */
export const MAX_AMOUNT = 2n ** 128n;
