import { id } from 'ethers/hash';

/** topic0 of an ERC-20 (and TRC-20) `Transfer(address indexed from, address indexed to, uint256 value)`, 0x-prefixed. */
export const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');

/**
 * No real amount reaches 2^128 base units (3.4e20 ETH at 18 decimals; a token's supply is bounded
 * by what its contract mints, and reading each totalSupply would cost a call): a value above it
 * comes from a faulty node.
 */
export const MAX_AMOUNT = 2n ** 128n;

/** A token `Transfer` event of a mined transaction; addresses as 40 lower-case hex digits (EVM and Tron alike). */
export interface TransferLog {
  contract: string;
  from: string;
  to: string;
  /** Base units. */
  amount: bigint;
}

const WORD_ADDRESS = /^(0x)?0{24}([0-9a-fA-F]{40})$/;
const WORD = /^(0x)?([0-9a-fA-F]{64})$/;

/** A log of `contract` (hex, with or without 0x or Tron's 41) as a Transfer; null for another event or a lookalike (ERC-721's has a 4th topic). */
export function transferLog(contract: string, topics: readonly string[], data: string): TransferLog | null {
  if (topics.length !== 3 || topics[0]!.replace(/^0x/, '').toLowerCase() !== TRANSFER_TOPIC.slice(2)) return null;
  const from = WORD_ADDRESS.exec(topics[1]!);
  const to = WORD_ADDRESS.exec(topics[2]!);
  const value = WORD.exec(data);
  if (!from || !to || !value) return null;
  return {
    contract: contract.replace(/^0x|^41(?=[0-9a-fA-F]{40}$)/, '').toLowerCase(),
    from: from[2]!.toLowerCase(),
    to: to[2]!.toLowerCase(),
    amount: BigInt('0x' + value[2]!),
  };
}

/** What `logs` show `contract` moved from `from` to `to` (40 lower-case hex digits each), in base units. */
export function deliveredBy(logs: readonly TransferLog[], q: { contract: string; from: string; to: string }): bigint {
  return logs.filter((l) => l.contract === q.contract && l.from === q.from && l.to === q.to).reduce((sum, l) => sum + l.amount, 0n);
}

/** What `logs` show `contract` moved out of `from`, to anyone, in base units. */
export function sentFrom(logs: readonly TransferLog[], q: { contract: string; from: string }): bigint {
  return logs.filter((l) => l.contract === q.contract && l.from === q.from).reduce((sum, l) => sum + l.amount, 0n);
}

/** The selector of ERC-20's (and TRC-20's) `decimals()`. */
export const DECIMALS_SELECTOR = '313ce567';

/** A `decimals()` answer (one 32-byte word holding a uint8, hex with or without 0x) as a number; null when it is not one. */
export function decimalsOf(answer: string): number | null {
  const word = WORD.exec(answer);
  if (!word) return null;
  const value = BigInt('0x' + word[2]!);
  return value <= 255n ? Number(value) : null;
}
