import { Interface } from 'ethers';

const ERC20 = new Interface(['function transfer(address to, uint256 amount) returns (bool)', 'function balanceOf(address owner) view returns (uint256)']);

/** The call data of an ERC-20 `transfer(to, amount)` (amount in the token's base units). */
export function erc20TransferData(to: string, amount: bigint): string {
  return ERC20.encodeFunctionData('transfer', [to, amount]);
}

/** The call data of an ERC-20 `balanceOf(owner)`. */
export function erc20BalanceOfData(owner: string): string {
  return ERC20.encodeFunctionData('balanceOf', [owner]);
}
