/**
 * The signer in the test's own process (DaemonOptions.signer): the same socket server, protocol and
 * checks as `coinkeep signer`, without a child process for every daemon a test starts. A few tests
 * run the real child (test/integration/wallet/signer-child.test.ts).
 */
import type { Config } from '../../src/config/schema';
import type { InProcessSigner } from '../../src/daemon/signer.wiring';
import { createLogger, silentLogger, type Logger } from '../../src/shared/logger';
import { runSigner } from '../../src/wallet/signer-process/main';

export function inProcessSigner(
  config: Config,
  logger: Logger = process.env.SIGNER_TEST_LOG ? createLogger({ write: (l) => console.error(l) }) : silentLogger,
): InProcessSigner {
  return (socketPath) => runSigner(config, { socketPath, logger, memoryJournal: true });
}
