import { addressDigits } from './address-text';

/**
 * ERC-20 call data, encoded by hand: two fixed shapes (a selector and 32-byte words) that the
 * sweeps and balance scans build by the thousand, where an ABI coder costs a checksum hash of each
 * address (tested equal to ethers' Interface in test/unit/chains/evm/eip1559.test.ts).
 */
const TRANSFER = 'a9059cbb';
const BALANCE_OF = '70a08231';
const MAX_UINT256 = (1n << 256n) - 1n;

function addressWord(address: string): string {
  return addressDigits(address).padStart(64, '0');
}

function uintWord(value: bigint): string {
  if (value < 0n || value > MAX_UINT256) throw new Error(`not a uint256: ${value}`);
  return value.toString(16).padStart(64, '0');
}

/** The call data of an ERC-20 `transfer(to, amount)` (amount in the token's base units). */
export function erc20TransferData(to: string, amount: bigint): string {
  return `0x${TRANSFER}${addressWord(to)}${uintWord(amount)}`;
}

/** The call data of an ERC-20 `balanceOf(owner)`. */
export function erc20BalanceOfData(owner: string): string {
  return `0x${BALANCE_OF}${addressWord(owner)}`;
}
