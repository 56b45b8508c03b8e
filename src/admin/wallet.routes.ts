import type { ChainConfig } from '../config/schema';
import { schemeFor } from '../chains/derivation';
import { newRouter, type AppRouter } from '../http/context';
import type { Logger } from '../shared/logger';
import type { AddressService } from '../wallet/address.service';
import { notFound } from '../shared/errors';
import type { WalletBackupResponse } from './contract';

/** What the wallet commands see of the seed: its name, and its words for a backup. No key. */
export interface WalletBackup {
  fingerprint: string;
  words(): string;
}

/**
 * `coinkeep wallet ...`: operator commands. The backup shows the mnemonic to whoever can reach the
 * admin socket (the daemon's own OS user, who also holds the master key); it is never logged.
 */
export function walletAdminRoutes(deps: { backup: WalletBackup; addresses: AddressService; chains: readonly ChainConfig[]; logger: Logger }): AppRouter {
  const r = newRouter('/admin/wallet');
  r.get('/', (ctx) => {
    ctx.body = {
      fingerprint: deps.backup.fingerprint,
      words: deps.backup.words().split(' ').length,
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
    const mnemonic = deps.backup.words();
    deps.logger.warn('wallet backup words shown over the admin socket', { fingerprint: deps.backup.fingerprint });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { fingerprint: deps.backup.fingerprint, words: mnemonic.split(' ').length, mnemonic } satisfies WalletBackupResponse;
  });
  return r;
}
