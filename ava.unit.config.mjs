/**
 * The unit tests (no I/O, fake clocks), run before the integration files: in worker threads, three
 * at a time, one process for all, and nine files to a thread, one after another (the groups that
 * scripts/write-test-groups.mjs writes; test/helpers/file-group.ts). A thread skips a process's
 * start-up (Node's bootstrap, its page faults and system calls, which this virtual machine makes
 * dear) but loads its file's modules again: all 104 unit files took 72.3 and 72.9 s of CPU a thread
 * each, 91.1 and 99.2 s a process each (2026-11-29), and 24.6 s in twelve groups (2026-11-29, later, against
 * 66.4 and 70.6 s a thread each, alternated). `npx ava FILE` still runs one file alone (ava.config.mjs).
 */
import base from './ava.config.mjs';

export default {
  ...base,
  files: ['dist/test/groups/unit/*.test.js'],
  workerThreads: true,
};
