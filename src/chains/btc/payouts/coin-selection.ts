import { feeFor, P2WPKH_INPUT_VSIZE } from '../tx-size';

export interface SelectionRequest<C extends { value: bigint }> {
  /** The spendable coins (every one a P2WPKH output of the paying account). */
  coins: readonly C[];
  /** What the payment outputs pay together, satoshi. */
  target: bigint;
  /** The vsize of the transaction without inputs and without change: overhead and payment outputs. */
  baseVsize: number;
  satPerVbyte: number;
  /** The change output's vsize. */
  changeVsize: number;
  /** The smallest change worth an output (the node's dust limit for the change script). */
  changeDust: bigint;
}

export interface Selection<C> {
  coins: C[];
  /** 0n: no change output (what is over the target and the fee goes to the fee). */
  change: bigint;
  fee: bigint;
  /** The estimated vsize of the transaction as selected. */
  vsize: number;
  method: 'exact' | 'largest_first';
}

/** Branch-and-bound stops after this many steps of its search and falls back. */
const BNB_TRIES = 100_000;

/**
 * Coins for a payout, cheapest first: an exact match found by branch-and-bound (coins whose value
 * after their own input fee covers the target and the fee within what a change output would cost,
 * so the transaction needs no change and the excess is smaller than that cost: Bitcoin Core's
 * selection), else the largest coins first until the target, the fee and a change output above dust
 * are covered; a change that would be dust (or cost more than it is worth) is left to the fee.
 * Null when the coins cannot pay.
 */
export function selectCoins<C extends { value: bigint }>(req: SelectionRequest<C>): Selection<C> | null {
  return branchAndBound(req) ?? largestFirst(req);
}

/**
 * `selectCoins` at the node's rate, or, when that costs more than `maxFee` (what the withdrawals
 * reserved for their network fee, all the merchant is charged), at the highest whole rate below it
 * whose fee stays within it (at least 1 sat/vB): a payout never takes from the account's coins
 * more than its withdrawals reserved, so the account's coins and its balance stay equal. When no
 * rate keeps within it (a reserve priced on other coins than those there now), the node's rate, or
 * 1 sat/vB when the coins cannot pay that: the excess is the operator's, as before.
 */
export function selectWithin<C extends { value: bigint }>(req: SelectionRequest<C>, maxFee: bigint): (Selection<C> & { satPerVbyte: number }) | null {
  const at = (satPerVbyte: number) => {
    const s = selectCoins({ ...req, satPerVbyte });
    return s && { ...s, satPerVbyte };
  };
  const quoted = at(req.satPerVbyte);
  if (quoted && quoted.fee <= maxFee) return quoted;
  // The fee grows with the rate: the highest rate that pays within the reserve, by bisection.
  let within: ReturnType<typeof at> = null;
  let low = 1;
  let high = Math.ceil(req.satPerVbyte) - 1;
  while (low <= high) {
    const mid = Math.floor((low + high) / 2);
    const s = at(mid);
    if (s && s.fee <= maxFee) {
      within = s;
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  return within ?? quoted ?? at(1);
}

function branchAndBound<C extends { value: bigint }>(req: SelectionRequest<C>): Selection<C> | null {
  const inputFee = feeFor(P2WPKH_INPUT_VSIZE, req.satPerVbyte);
  // A change output costs its own bytes now and an input to spend it later.
  const costOfChange = feeFor(req.changeVsize, req.satPerVbyte) + inputFee;
  const target = req.target + feeFor(req.baseVsize, req.satPerVbyte);
  const pool = req.coins
    .map((coin) => ({ coin, effective: coin.value - inputFee }))
    .filter((c) => c.effective > 0n)
    .sort((a, b) => (b.effective > a.effective ? 1 : b.effective < a.effective ? -1 : 0));
  // What the coins from position i on are worth together: a branch that cannot reach the target stops.
  const rest: bigint[] = new Array(pool.length + 1).fill(0n);
  for (let i = pool.length - 1; i >= 0; i--) rest[i] = rest[i + 1]! + pool[i]!.effective;
  if (rest[0]! < target) return null;

  let best: number[] | null = null;
  let bestExcess = costOfChange + 1n;
  const chosen: number[] = [];
  let tries = 0;
  // Depth-first over "take coin i or not", largest first; the recursion goes one level per coin
  // taken (the skips are the loop), so thousands of coins do not exhaust the stack.
  const search = (start: number, sum: bigint): boolean => {
    for (let i = start; i < pool.length;) {
      if (++tries > BNB_TRIES) return false;
      if (sum + rest[i]! < target) return true;
      const reached = sum + pool[i]!.effective;
      if (reached >= target) {
        const excess = reached - target;
        if (excess <= costOfChange && excess < bestExcess) {
          bestExcess = excess;
          best = [...chosen, i];
          if (excess === 0n) return false;
        }
      } else {
        chosen.push(i);
        const going = search(i + 1, reached);
        chosen.pop();
        if (!going) return false;
      }
      // Skipping a coin equal to the one just tried would only find the same sums again.
      let next = i + 1;
      while (next < pool.length && pool[next]!.effective === pool[i]!.effective) next++;
      i = next;
    }
    return true;
  };
  search(0, 0n);
  if (best === null) return null;
  const coins = (best as number[]).map((i) => pool[i]!.coin);
  const total = coins.reduce((s, c) => s + c.value, 0n);
  return { coins, change: 0n, fee: total - req.target, vsize: req.baseVsize + coins.length * P2WPKH_INPUT_VSIZE, method: 'exact' };
}

function largestFirst<C extends { value: bigint }>(req: SelectionRequest<C>): Selection<C> | null {
  const sorted = [...req.coins].sort((a, b) => (b.value > a.value ? 1 : b.value < a.value ? -1 : 0));
  const coins: C[] = [];
  let total = 0n;
  for (const coin of sorted) {
    coins.push(coin);
    total += coin.value;
    const bare = req.baseVsize + coins.length * P2WPKH_INPUT_VSIZE;
    const withChange = bare + req.changeVsize;
    const change = total - req.target - feeFor(withChange, req.satPerVbyte);
    const costOfChange = feeFor(req.changeVsize + P2WPKH_INPUT_VSIZE, req.satPerVbyte);
    if (change >= req.changeDust && change > costOfChange)
      return { coins, change, fee: total - req.target - change, vsize: withChange, method: 'largest_first' };
    if (total - req.target >= feeFor(bare, req.satPerVbyte)) return { coins, change: 0n, fee: total - req.target, vsize: bare, method: 'largest_first' };
  }
  return null;
}
