import type { Command } from 'commander';
import type { ChainReport } from '../../daemon/doctor';
import { UserError } from '../../shared/errors';
import { cliConfig, output } from '../context';

/**
 * `coinkeep doctor`: checks every configured node and prints, per chain, what it found and what
 * to change; the exit code is non-zero when a chain cannot work (PRODUCT §15).
 */
export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check every configured node: network, sync and staleness, indexes and pruning, lite nodes, archive state, batch and log limits, latency')
    .action(async (_o: unknown, cmd: Command) => {
      // Loaded when run: the chain families' libraries are not for every CLI call.
      const { doctorLines, runDoctor } = require('../../daemon/doctor') as typeof import('../../daemon/doctor');
      const reports = await runDoctor(cliConfig(cmd), AbortSignal.timeout(120_000));
      output(cmd, { chains: reports }, (r: { chains: ChainReport[] }) => doctorLines(r.chains).join('\n'));
      const broken = reports.filter((c) => !c.works);
      if (broken.length > 0) throw new UserError(`doctor: ${broken.map((c) => c.chain_id).join(', ')} cannot work; see above what to change`);
    });
}
