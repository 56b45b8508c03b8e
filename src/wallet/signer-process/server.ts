import { chmodSync, existsSync, rmSync } from 'node:fs';
import net from 'node:net';
import { Catalog } from '../../catalog/coins';
import { btcNetwork } from '../../chains/btc/derive';
import { outputScript } from '../../chains/btc/parse';
import { signTronContract } from '../../chains/tron/transaction';
import type { Config } from '../../config/schema';
import { Store } from '../../db/store';
import { systemClock, type Clock } from '../../shared/clock';
import type { Logger } from '../../shared/logger';
import { HdWallet } from '../hd';
import { MAX_LINE_BYTES, SignRefused, type SignerAnswer, type SignerRequest, type SignPurpose, type WireBranchKey } from '../signer-protocol';
import type { WalletSigner } from '../signer';
import { SpendGuard } from './guard';

export interface SignerServerDeps {
  config: Config;
  signer: WalletSigner;
  socketPath: string;
  logger: Logger;
  clock?: Clock;
  /** The rate of a ticker in the default fiat (the signer's own rate engine). */
  rate: (ticker: string) => string;
  /** Keep the hourly journal in this file (the real signer); tests in one process keep it in memory. */
  journalFile?: string | null;
}

export interface SignerServer {
  socketPath: string;
  fingerprint: string;
  close(): Promise<void>;
}

const BRANCH_PATH = /^m\/\d+'\/\d+'\/\d+'\/[01]$/;

/**
 * The signer's socket server (PRODUCT §18): answers the daemon's requests one line each, checking
 * every spend against the rows it reads itself (SpendGuard) before WalletSigner signs it, and logs
 * each decision (never key material). It opens its own connection to the database: it sees what is
 * committed, never another process's open transaction. Used by `coinkeep signer` and, in one
 * process, by the tests' daemons.
 */
export async function startSignerServer(deps: SignerServerDeps): Promise<SignerServer> {
  const { config, signer, logger } = deps;
  const store = await Store.open({ url: config.database.url });
  const catalog = new Catalog(config.chains, config.fiat);
  const wallet = new HdWallet(signer);
  const guard = new SpendGuard({
    store,
    chains: config.chains,
    catalog,
    wallet,
    limits: config.signer.max_per_hour,
    defaultFiat: config.fiat.default,
    rate: deps.rate,
    clock: deps.clock ?? systemClock,
    logger,
    journalFile: deps.journalFile ?? null,
  });
  // One request at a time: the hourly limit counts what was signed before the next is checked.
  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const decide = async (req: SignerRequest): Promise<unknown> => {
    switch (req.op) {
      case 'hello':
        return { fingerprint: signer.fingerprint, pid: process.pid };
      case 'branch_keys':
        for (const path of req.paths) if (!BRANCH_PATH.test(path)) throw new SignRefused('bad_request', `not a branch path: ${path}`);
        return signer.branchKeysAt(req.paths).map((key, i): WireBranchKey => ({
          path: req.paths[i]!,
          public_key: Buffer.from(key.publicKey).toString('hex'),
          chain_code: Buffer.from(key.chainCode).toString('hex'),
        }));
      case 'sign_btc': {
        const record = await guard.checkBtc(req.chain_id, req.purpose, req.spend);
        const { chain } = guard.chainOf(req.chain_id);
        const signed = signer.signBitcoin({
          chain,
          coins: req.spend.coins.map((c) => ({ txid: c.txid, vout: c.vout, value: BigInt(c.value), path: c.path })),
          outputs: req.spend.outputs.map((o) => ({
            address: o.address,
            value: BigInt(o.value),
            script: outputScript(o.address, btcNetwork(chain)) ?? undefined,
          })),
          sequence: req.spend.sequence,
        });
        record();
        logDecision(logger, req, 'signed', { txid: signed.txid });
        return signed;
      }
      case 'sign_evm': {
        const records: Array<() => void> = [];
        const { chain } = guard.chainOf(req.chain_id);
        for (const item of req.items) records.push(await guard.checkEvm(req.chain_id, item.purpose, item.spend));
        const signed = signer.signEvmAll(
          req.items.map(({ spend }) => ({
            chainId: chain.chain_id!,
            path: spend.path,
            nonce: spend.nonce,
            to: spend.to,
            value: BigInt(spend.value),
            data: spend.data,
            gasLimit: BigInt(spend.gas_limit),
            maxFeePerGas: BigInt(spend.max_fee_per_gas),
            maxPriorityFeePerGas: BigInt(spend.max_priority_fee_per_gas),
            legacy: spend.legacy,
          })),
        );
        for (const r of records) r();
        logDecision(logger, req, 'signed', { txids: signed.map((s) => s.txid) });
        return signed;
      }
      case 'sign_tron': {
        const record = await guard.checkTron(req.chain_id, req.purpose, req.spend);
        const s = req.spend;
        const signed = signTronContract(
          s.contract,
          s.ref,
          s.expires_in_ms,
          (txid) => signer.signTron(s.path, txid),
          s.fee_limit === undefined ? undefined : BigInt(s.fee_limit),
        );
        record();
        logDecision(logger, req, 'signed', { txid: signed.txid });
        return signed;
      }
      default:
        throw new SignRefused('bad_request', `unknown op ${String((req as { op?: unknown }).op)}`);
    }
  };

  const answer = async (line: string): Promise<SignerAnswer> => {
    let req: SignerRequest;
    try {
      req = JSON.parse(line) as SignerRequest;
      if (typeof req !== 'object' || req === null || typeof req.id !== 'number') throw new Error('no id');
    } catch {
      return { id: -1, ok: false, error: { code: 'bad_request', reason: 'not a JSON request with an id' } };
    }
    try {
      return { id: req.id, ok: true, result: await serially(() => decide(req)) };
    } catch (err) {
      if (err instanceof SignRefused) {
        logDecision(logger, req, 'refused', { code: err.code, reason: err.reason });
        return { id: req.id, ok: false, error: { code: err.code === 'bad_request' ? 'bad_request' : 'refused', reason: `${err.code}: ${err.reason}` } };
      }
      logger.error('signer request failed', { op: req.op, error: err instanceof Error ? err.message : String(err) });
      return { id: req.id, ok: false, error: { code: 'internal', reason: err instanceof Error ? err.message : String(err) } };
    }
  };

  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > MAX_LINE_BYTES) return socket.destroy();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() === '') continue;
        void answer(line).then((a) => {
          if (!socket.destroyed) socket.write(JSON.stringify(a, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) + '\n');
        });
      }
    });
  });
  if (existsSync(deps.socketPath)) rmSync(deps.socketPath, { force: true });
  // The socket is the owner's only from its creation (umask), then chmod for certainty.
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(deps.socketPath, () => resolve());
    });
  } finally {
    process.umask(umask);
  }
  chmodSync(deps.socketPath, 0o600);
  logger.info('signer listening', { socket: deps.socketPath, fingerprint: signer.fingerprint });
  return {
    socketPath: deps.socketPath,
    fingerprint: signer.fingerprint,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      rmSync(deps.socketPath, { force: true });
      await store.close();
    },
  };
}

function logDecision(logger: Logger, req: SignerRequest, decision: 'signed' | 'refused', details: Record<string, unknown>): void {
  const purposes: SignPurpose[] = req.op === 'sign_evm' ? req.items.map((i) => i.purpose) : 'purpose' in req ? [req.purpose] : [];
  const fields = {
    decision,
    op: req.op,
    chain: 'chain_id' in req ? req.chain_id : undefined,
    kinds: [...new Set(purposes.map((p) => p.kind))],
    account_id: purposes[0]?.account_id ?? null,
    withdrawal_ids: purposes.flatMap((p) => p.withdrawal_ids),
    ...details,
  };
  if (decision === 'refused') logger.warn('signer refused', fields);
  else logger.info('signer signed', fields);
}
