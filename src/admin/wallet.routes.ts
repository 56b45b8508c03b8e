import type { ChainConfig } from '../config/schema';
import { schemeFor } from '../chains/derivation';
import { newRouter, type AppRouter } from '../http/context';
import type { Logger } from '../shared/logger';
import type { AddressService } from '../wallet/address.service';
import type { HdWallet } from '../wallet/hd';
import { notFound } from '../shared/errors';
import type { WalletBackupResponse } from './contract';

/**
 * `coinkeep wallet ...`: operator commands. The backup shows the mnemonic to whoever can reach the
 * admin socket (the daemon's own OS user, who also holds the master key); it is never logged.
 */
export function walletAdminRoutes(deps: { wallet: HdWallet; addresses: AddressService; chains: readonly ChainConfig[]; logger: Logger }): AppRouter {
  const r = newRouter('/admin/wallet');
  r.get('/', (ctx) => {
    ctx.body = {
      fingerprint: deps.wallet.fingerprint,
      words: deps.wallet.mnemonic().split(' ').length,
      chains: deps.chains.map((c) => {
        const s = schemeFor(c);
        return { chain_id: c.id, kind: c.kind, path: `m/${s.purpose}'/${s.coinType}'/{branch}'/0/{index}` };
      }),
    };
  });
  r.get('/branches/:accountId', async (ctx) => {
    const branch = await deps.addresses.branchFor(ctx.params.accountId!);
    if (branch === null) throw notFound('wallet branch of this account (it has no address yet)');
    ctx.body = { account_id: ctx.params.accountId, branch };
  });
  r.post('/backup', (ctx) => {
    const mnemonic = deps.wallet.mnemonic();
    deps.logger.warn('wallet backup words shown over the admin socket', { fingerprint: deps.wallet.fingerprint });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { fingerprint: deps.wallet.fingerprint, words: mnemonic.split(' ').length, mnemonic } satisfies WalletBackupResponse;
  });
  return r;
}
