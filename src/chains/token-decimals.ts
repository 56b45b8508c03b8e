import type { ChainConfig } from '../config/schema';
import { UserError } from '../shared/errors';
import type { Logger } from '../shared/logger';
import type { ChainSender } from './types';

/**
 * Each configured token's `decimals` against what its contract answers to `decimals()`, at start
 * (PRODUCT §14): a wrong figure would credit and pay every amount of the token a power of ten off.
 * A mismatch, or a contract that answers no decimals, stops the daemon with one line naming the
 * key the figure came from (the token's `decimals`, or the chain's `preset`), the chain, the token
 * and both values. A node that cannot be asked now is warned about and
 * the token checked at the next start: the chain's coins wait in maintenance until it answers anyway.
 */
export async function checkTokenDecimals(
  chains: readonly ChainConfig[],
  senderOf: (chainId: string) => ChainSender | null,
  logger: Logger,
  signal?: AbortSignal,
): Promise<void> {
  const checks = chains.flatMap((chain, i) => {
    const sender = senderOf(chain.id);
    if (!sender?.tokenDecimals) return [];
    return chain.tokens.map(async (token, j) => {
      let answer: number | null;
      try {
        answer = await sender.tokenDecimals!(token.contract, signal);
      } catch (err) {
        logger.warn('token decimals not checked: the node did not answer', {
          chain: chain.id,
          token: token.ticker,
          error: err instanceof Error ? err.message : String(err),
        });
        return;
      }
      if (answer === token.decimals) return;
      const said = answer === null ? 'answers no decimals()' : `says ${answer}`;
      throw new UserError(
        `${token.decimals_key ?? `chains[${i}].tokens[${j}].decimals`}: ${chain.id} ${token.ticker} is configured with ${token.decimals} decimals, its contract ${token.contract} ${said}`,
      );
    });
  });
  await Promise.all(checks);
}
