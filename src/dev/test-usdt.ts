import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Contract, ContractFactory, getCreateAddress, type InterfaceAbi, type JsonRpcProvider, type Signer } from 'ethers';
import { PROJECT_ROOT } from '../config/load';

/** The sandbox's test tokens, built by scripts/compile-contracts.js (run by `npm run build`) from src/dev/contracts/Test<TICKER>.sol. */
export type TestToken = 'USDT' | 'USDC';

/** Both have 6 decimals, as Tether's and Circle's tokens on Ethereum and Base. */
export const TEST_USDT_DECIMALS = 6;
export const TEST_TOKEN_DECIMALS: Record<TestToken, number> = { USDT: TEST_USDT_DECIMALS, USDC: 6 };

/**
 * The deployer's nonce each token is deployed at (its mint follows at the next one): a fresh chain
 * always has it at the same address. USDC comes after USDT's deployment and mint, so a sandbox chain
 * made before the sandbox had USDC gets it at its next start.
 */
const DEPLOY_NONCE: Record<TestToken, number> = { USDT: 0, USDC: 2 };

interface Artifact {
  abi: InterfaceAbi;
  bytecode: string;
}

const artifacts = new Map<TestToken, Artifact>();
const loadArtifact = (token: TestToken): Artifact => {
  let a = artifacts.get(token);
  if (!a) {
    a = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'dist', 'contracts', `Test${token}.json`), 'utf8')) as Artifact;
    artifacts.set(token, a);
  }
  return a;
};

/** A test token's contract (both tokens have the same ERC-20 interface plus `mint`). */
export const testToken = (address: string, runner: Signer | JsonRpcProvider, token: TestToken = 'USDT'): Contract =>
  new Contract(address, loadArtifact(token).abi, runner);

export const testUsdt = (address: string, runner: Signer | JsonRpcProvider): Contract => testToken(address, runner, 'USDT');

/**
 * A test token of the sandbox, deployed by `deployer` at its nonce for that token (DEPLOY_NONCE),
 * or reused when the chain has it already. `mintTo` receives `mintAmount` base units at deployment.
 */
export async function ensureTestToken(token: TestToken, deployer: Signer, mintTo: string, mintAmount: bigint): Promise<string> {
  const provider = deployer.provider!;
  const from = await deployer.getAddress();
  const nonce = DEPLOY_NONCE[token];
  const address = getCreateAddress({ from, nonce });
  if ((await provider.getCode(address)) !== '0x') return address;
  // Asked of the node itself: ethers answers a request made again within 250 ms from its cache, and
  // the previous token's deployment and mint can be that quick (the nonce read before them would come back).
  const sent = Number(await (provider as JsonRpcProvider).send('eth_getTransactionCount', [from, 'latest']));
  if (sent !== nonce)
    throw new Error(`the sandbox chain has no test ${token} at ${address} and its deployer is past nonce ${nonce}: remove the sandbox's chain state`);
  const { abi, bytecode } = loadArtifact(token);
  const contract = await new ContractFactory(abi, bytecode, deployer).deploy({ nonce });
  await contract.waitForDeployment();
  const mint = (await testToken(address, deployer, token).getFunction('mint')(mintTo, mintAmount, { nonce: nonce + 1 })) as { wait(): Promise<unknown> };
  await mint.wait();
  return address;
}

/** The test USDT (deployer's first transaction), as ensureTestToken. */
export const ensureTestUsdt = (deployer: Signer, mintTo: string, mintAmount: bigint): Promise<string> => ensureTestToken('USDT', deployer, mintTo, mintAmount);
