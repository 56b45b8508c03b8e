/**
 * A WalletSigner behind the RemoteSigner interface, without the signer process's checks: for tests
 * of a rail alone (the checks are the signer's, tested through its socket in the daemon's tests).
 */
import { signTronContract } from '../../src/chains/tron/transaction';
import type { RemoteSigner } from '../../src/wallet/signer-client';
import { WalletSigner } from '../../src/wallet/signer';
import { silentLogger } from '../../src/shared/logger';
import { TEST_MNEMONIC } from './test-mnemonic';

export function localSigner(signer: WalletSigner = new WalletSigner(() => TEST_MNEMONIC, silentLogger)): RemoteSigner & { wallet: WalletSigner } {
  return {
    wallet: signer,
    signBitcoin: async (spend) => signer.signBitcoin(spend),
    signEvm: async (_chainId, items) => signer.signEvmAll(items.map((i) => i.spend)),
    signTron: async (_chainId, s) => signTronContract(s.contract, s.ref, s.expiresInMs, (txid) => signer.signTron(s.path, txid), s.feeLimit),
  };
}
