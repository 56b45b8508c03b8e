import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Contract, ContractFactory, getCreateAddress, type InterfaceAbi, type JsonRpcProvider, type Signer } from 'ethers';
import { PROJECT_ROOT } from '../config/load';

/** Built by scripts/compile-contracts.js (run by `npm run build`) from src/dev/contracts/TestUSDT.sol. */
const ARTIFACT = path.join(PROJECT_ROOT, 'dist', 'contracts', 'TestUSDT.json');

export const TEST_USDT_DECIMALS = 6;

interface Artifact {
  abi: InterfaceAbi;
  bytecode: string;
}

let artifact: Artifact | undefined;
const loadArtifact = (): Artifact => (artifact ??= JSON.parse(readFileSync(ARTIFACT, 'utf8')) as Artifact);

export const testUsdt = (address: string, runner: Signer | JsonRpcProvider): Contract => new Contract(address, loadArtifact().abi, runner);

/**
 * The sandbox's test USDT: deployed by `deployer` as its first transaction, so a fresh chain always
 * has it at the same address (and the coin the same id); on a chain that already has it, it is
 * reused. `mintTo` receives `mintAmount` base units at deployment.
 */
export async function ensureTestUsdt(deployer: Signer, mintTo: string, mintAmount: bigint): Promise<string> {
  const provider = deployer.provider!;
  const from = await deployer.getAddress();
  const address = getCreateAddress({ from, nonce: 0 });
  if ((await provider.getCode(address)) !== '0x') return address;
  if ((await provider.getTransactionCount(from)) !== 0)
    throw new Error(`the sandbox chain has no test USDT at ${address} and its deployer has already sent transactions: remove the sandbox's chain state`);
  const { abi, bytecode } = loadArtifact();
  const contract = await new ContractFactory(abi, bytecode, deployer).deploy();
  await contract.waitForDeployment();
  const mint = (await testUsdt(address, deployer).getFunction('mint')(mintTo, mintAmount)) as { wait(): Promise<unknown> };
  await mint.wait();
  return address;
}
