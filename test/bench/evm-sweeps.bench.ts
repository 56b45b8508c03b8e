/**
 * EVM sweeps (issue 19 §5): 1,000 credited deposit addresses, half holding ETH and half the test
 * USDT, swept into their accounts' treasuries on anvil by the daemon's send queue and sweeper (the
 * token half topped up with gas by the gas station first), against the same number of plain
 * pre-signed transfers sent by a bare ethers script in the same run. The goal: sweep wall time at
 * most 2× the bare script's; the process's RSS while sweeping is printed.
 *
 * Anvil's times vary a lot from one run to the next on this shared machine (the bare script alone
 * took 1.4 to 4.6 s in runs minutes apart), so both are measured in interleaved rounds, each on
 * new addresses, and the ratio is the median rounds'.
 */
import { localSigner } from '../helpers/local-signer';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AbiCoder, HDNodeWallet, JsonRpcProvider, keccak256, parseEther, Transaction } from 'ethers';
import { Catalog, coinId } from '../../src/catalog/coins';
import { EvmAdapter } from '../../src/chains/evm/evm-adapter';
import { evmScheme } from '../../src/chains/evm/derive';
import { WatchedAddresses } from '../../src/chains/watched-addresses';
import { parseConfig } from '../../src/config/schema';
import { insertRow, rawQuery } from '../../src/db/raw';
import { Sealer } from '../../src/db/seal';
import { Store } from '../../src/db/store';
import { anvilChainEntry, prepareAnvil } from '../../src/dev/anvil';
import { AnvilNode } from '../../src/dev/anvil-node';
import { Ledger } from '../../src/ledger/ledger';
import { MoneyMovement } from '../../src/money/money-movement';
import { EvmSendQueue } from '../../src/chains/evm/payouts/send-queue';
import { EvmSweeper } from '../../src/chains/evm/payouts/sweeper';
import { feeCeilings } from '../../src/payouts/fee-ceiling';
import { systemClock } from '../../src/shared/clock';
import { newId, newTimeOrderedId } from '../../src/shared/ids';
import { silentLogger } from '../../src/shared/logger';
import { AddressService } from '../../src/wallet/address.service';
import { HdWallet } from '../../src/wallet/hd';
import { WalletSigner } from '../../src/wallet/signer';
import { TEST_MNEMONIC } from '../helpers/test-mnemonic';
import { fmt, report, rssMiB } from './lib';

const ADDRESSES = Number(process.env.BENCH_SWEEP_ADDRESSES ?? 1000);
const ROUNDS = Number(process.env.BENCH_SWEEP_ROUNDS ?? 3);
const ACCOUNT = 'bench-account';
/** How often the bench mines the transactions waiting in anvil's pool (see `unstuck`). */
const STUCK_CHECK_MS = 250;

/**
 * Anvil 1.7's automatic mode can leave transactions that arrived in a burst in its pool, ready but
 * not mined, or mine them a few a block (foundry issue 10122; seen here: a hundred sweeps waited
 * 10 to 180 s, with its mixed mining too, and a thousand took 6 s to drain, while an evm_mine took
 * them all at once). As a chain's next block would, the bench mines one every STUCK_CHECK_MS
 * while the pool holds transactions, for the bare script and the sweeps alike. Stop with the
 * returned function.
 */
function unstuck(node: AnvilNode): () => Promise<void> {
  let busy: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    busy = busy
      .then(async () => {
        const pending = Number((await node.rpc<{ pending: string }>('txpool_status')).pending);
        if (pending > 0) await node.rpc('evm_mine');
      })
      .catch(() => undefined);
  }, STUCK_CHECK_MS);
  return async () => {
    clearInterval(timer);
    await busy;
  };
}

export async function run(): Promise<void> {
  // Quiet: anvil's log of every request would be drained by this process, the sweeper's and the bare script's.
  const node = await AnvilNode.start({ quiet: true });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coinkeep-bench-sweeps-'));
  try {
    const usdt = await prepareAnvil(node);
    const config = parseConfig({ chains: [anvilChainEntry(node.rpcUrl, usdt, { confirmations: 1, options: { poll_interval_ms: 50, stall_seconds: 0 } })] });
    const chain = config.chains[0]!;
    const catalog = new Catalog(config.chains, config.fiat);
    const store = await Store.open({ url: `sqlite:${path.join(dir, 'bench.db')}` });
    await store.migrate();
    const signer = new WalletSigner(() => TEST_MNEMONIC, silentLogger);
    const wallet = new HdWallet(signer);
    const addresses = new AddressService({ store, wallet, chains: config.chains, catalog, watched: new WatchedAddresses(), clock: systemClock });
    const rpc = (method: string, params: unknown[]) => node.rpc(method, params);
    const ETH = coinId(chain.id, 'native');
    const USDT = coinId(chain.id, usdt);
    const slot = (a: string) => keccak256(AbiCoder.defaultAbiCoder().encode(['address', 'uint256'], [a, 0]));

    const gasStation = addresses.gasStation(chain.id);
    await rpc('anvil_setBalance', [gasStation.address, `0x${parseEther('1000').toString(16)}`]);
    const adapter = new EvmAdapter(chain);
    const ceiling = feeCeilings([chain], systemClock).get(chain.id)!;
    const queue = new EvmSendQueue({
      chain,
      node: adapter,
      store,
      catalog,
      signer: localSigner(signer),
      sealer: new Sealer(Buffer.alloc(32, 7)),
      replaceAfterBlocks: 6,
      ceiling,
      clock: systemClock,
      logger: silentLogger,
    });
    const sweeper = new EvmSweeper({
      chain,
      node: adapter,
      store,
      catalog,
      queue,
      money: new MoneyMovement({ ledger: new Ledger(systemClock), catalog, clock: systemClock }),
      treasuryOf: (em, accountId) => addresses.treasury(em, accountId, chain.id),
      gasStation,
      ceiling,
      clock: systemClock,
      logger: silentLogger,
    });
    queue.own('sweep', sweeper).own('topup', sweeper);

    /** Round `r`'s 1,000 deposit addresses of one account, each with a credited payment, and what they hold on the chain. */
    const seed = async (r: number) => {
      const now = new Date().toISOString();
      await store.write(async (em) => {
        for (let k = 0; k < ADDRESSES; k++) {
          const i = r * ADDRESSES + k;
          const token = k % 2 === 1;
          const d = wallet.derive(evmScheme(), 0, i);
          const addressId = newTimeOrderedId();
          const coin = token ? USDT : ETH;
          const amount = token ? '100' : '0.1';
          await insertRow(em, 'addresses', {
            id: addressId,
            account_id: ACCOUNT,
            chain_id: chain.id,
            coin_id: coin,
            address: d.address,
            derivation_path: d.path,
            derivation_index: i,
            purpose: 'invoice',
            invoice_id: null,
            status: 'active',
            created_at: now,
            updated_at: now,
          });
          const transferId = newId();
          await insertRow(em, 'chain_transfers', {
            id: transferId,
            chain_id: chain.id,
            coin_id: coin,
            txid: `0x${i.toString(16).padStart(64, '0')}`,
            output_index: 0,
            direction: 'incoming',
            purpose: 'invoice',
            address: d.address,
            address_id: addressId,
            account_id: ACCOUNT,
            amount,
            spent_transfer_id: null,
            nonce: null,
            block_height: 1,
            block_hash: '0x00',
            confirmations: 10,
            status: 'confirmed',
            seen_at: now,
            confirmed_at: now,
            reverted_at: null,
            created_at: now,
            updated_at: now,
          });
          await insertRow(em, 'transactions', {
            id: newId(),
            account_id: ACCOUNT,
            type: 'invoice_payment',
            status: 'confirmed',
            coin_id: coin,
            amount,
            fee: '0',
            net_amount: amount,
            txid: null,
            chain_transfer_id: transferId,
            invoice_id: null,
            address_id: null,
            withdrawal_id: null,
            reverses_id: null,
            created_at: now,
            confirmed_at: now,
            updated_at: now,
          });
          if (token) await rpc('anvil_setStorageAt', [usdt, slot(d.address), `0x${100_000_000n.toString(16).padStart(64, '0')}`]);
          else await rpc('anvil_setBalance', [d.address, `0x${parseEther('0.1').toString(16)}`]);
        }
      });
    };

    // The bare script: the same number of plain transfers, signed beforehand (round r: each payer's nonce r), sent side by side, until all are mined.
    const payerBranch = HDNodeWallet.fromPhrase(TEST_MNEMONIC, undefined, "m/44'/60'/7'/0");
    const payers = Array.from({ length: ADDRESSES }, (_, i) => payerBranch.deriveChild(i));
    for (const p of payers) await rpc('anvil_setBalance', [p.address, `0x${parseEther('1').toString(16)}`]);
    const to = HDNodeWallet.fromPhrase(TEST_MNEMONIC, undefined, "m/44'/60'/8'/0/0").address;
    // Signed beforehand: transfer k of each payer (its nonce k), each payer's first ones for the bare
    // ethers script, the next for the same sent through the daemon's own RPC client.
    const signed = async (nonce: number) => {
      const fees = await adapter.feeQuote();
      if (fees.kind !== 'evm') throw new Error('no EVM quote');
      return Promise.all(
        payers.map((p) =>
          p.signTransaction(
            Transaction.from({
              type: 2,
              chainId: chain.chain_id,
              nonce,
              to,
              value: 1n,
              gasLimit: 21_000n,
              maxFeePerGas: fees.maxFeePerGas * 2n,
              maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
            }),
          ),
        ),
      );
    };
    /** Sends `raws` side by side and asks for all their receipts until every one is mined: the wall time. */
    const sentAndMined = async (raws: string[], send: (raw: string) => Promise<string>, receipts: (hashes: string[]) => Promise<unknown[]>) => {
      const stop = unstuck(node);
      try {
        const started = process.hrtime.bigint();
        const hashes = await Promise.all(raws.map(send));
        while (!(await receipts(hashes)).every((x) => x !== null));
        return Number(process.hrtime.bigint() - started) / 1e9;
      } finally {
        await stop();
      }
    };
    const provider = new JsonRpcProvider(node.rpcUrl, chain.chain_id, { staticNetwork: true });
    const bareEthers = async (r: number) =>
      sentAndMined(
        await signed(2 * r),
        async (raw) => (await provider.broadcastTransaction(raw)).hash,
        (hashes) => Promise.all(hashes.map((h) => provider.getTransactionReceipt(h))),
      );
    const bareAdapter = async (r: number) =>
      sentAndMined(
        await signed(2 * r + 1),
        (raw) => adapter.broadcast(raw),
        (hashes) => adapter.receipts(hashes),
      );

    const sweeps = async (r: number) => {
      const stop = unstuck(node);
      try {
        const started = process.hrtime.bigint();
        let passes = 0;
        for (;;) {
          passes++;
          await queue.track();
          await sweeper.plan();
          await queue.broadcastReady();
          const [left] = await rawQuery<{ n: number }>(store.read, `SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status <> 'mined'`);
          const [done] = await rawQuery<{ n: number }>(store.read, `SELECT COUNT(*) AS n FROM account_sends WHERE kind = 'sweep' AND status = 'mined'`);
          if (Number(left!.n) === 0 && Number(done!.n) === (r + 1) * ADDRESSES) break;
          if (passes > 10_000) throw new Error('the sweeps did not finish');
          await new Promise((res) => setTimeout(res, 50));
        }
        return { seconds: Number(process.hrtime.bigint() - started) / 1e9, passes };
      } finally {
        await stop();
      }
    };

    let peak = rssMiB();
    const rounds: Array<{ bare: number; ours: number; sweep: number; passes: number }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      await seed(r);
      const bareSeconds = await bareEthers(r);
      const oursSeconds = await bareAdapter(r);
      const sampler = setInterval(() => (peak = Math.max(peak, rssMiB())), 50);
      try {
        const { seconds, passes } = await sweeps(r);
        rounds.push({ bare: bareSeconds, ours: oursSeconds, sweep: seconds, passes });
      } finally {
        clearInterval(sampler);
      }
    }
    const treasury = (await rawQuery<{ address: string }>(store.read, `SELECT address FROM addresses WHERE purpose = 'treasury'`))[0]!.address;
    const [swept] = await adapter.balances([treasury], usdt);
    if (swept !== 100_000_000n * BigInt((ROUNDS * ADDRESSES) / 2)) throw new Error(`the treasury holds ${swept} USDT units`);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratios = rounds.map((x) => x.sweep / x.bare);
    const ratio = median(ratios);
    report(
      `EVM sweeps of ${ADDRESSES} credited deposit addresses (${ADDRESSES / 2} ETH, ${ADDRESSES / 2} USDT with a gas top-up each) on anvil, ${ROUNDS} rounds`,
      [
        ['bare ethers script: pre-signed transfers sent, all mined (s)', rounds.map((x) => fmt(x.bare, 2)).join(' ')],
        ["  the same through the daemon's RPC client (s)", rounds.map((x) => fmt(x.ours, 2)).join(' ')],
        ['sweeps: plan, top-ups, sign, store, send, follow, all final (s)', rounds.map((x) => fmt(x.sweep, 2)).join(' ')],
        ['passes', rounds.map((x) => String(x.passes)).join(' ')],
        ['ratios per round', ratios.map((x) => fmt(x, 3)).join(' ')],
        ["  sweeps / the same through the daemon's RPC client", rounds.map((x) => fmt(x.sweep / x.ours, 3)).join(' ')],
        ['transactions the sweeps sent a round', String(ADDRESSES + ADDRESSES / 2)],
        ['RSS of the process while sweeping, peak (MiB)', fmt(peak)],
      ],
      { name: 'sweep time / bare script time (median round)', value: ratio, goal: '≤ 2', ok: ratio <= 2 },
    );
    provider.destroy();
    await store.close();
  } finally {
    await node.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
