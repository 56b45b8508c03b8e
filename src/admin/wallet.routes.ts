import type { ChainConfig } from '../config/schema';
import { schemeFor } from '../chains/derivation';
import { newRouter, type AppRouter } from '../http/context';
import type { Logger } from '../shared/logger';
import type { AddressService } from '../wallet/address.service';
import { notFound } from '../shared/errors';

/**
 * `coinkeep wallet ...`: operator commands. The daemon knows the seed's fingerprint only: the backup
 * words are read with the signer key in the operator's shell (`coinkeep signer backup`).
 */
export function walletAdminRoutes(deps: { fingerprint: string; addresses: AddressService; chains: readonly ChainConfig[]; logger: Logger }): AppRouter {
  const r = newRouter('/admin/wallet');
  r.get('/', (ctx) => {
    ctx.body = {
      fingerprint: deps.fingerprint,
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
  return r;
}
