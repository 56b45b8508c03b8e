/**
 * The unit tests (no I/O, fake clocks), run before the integration files: in worker threads, three
 * at a time, one process for all, and nine files to a thread, one after another (the groups that
 * scripts/write-test-groups.mjs writes; test/helpers/file-group.ts). A thread skips a process's
 * start-up, which this virtual machine makes dear, but loads its file's modules again; a group
 * loads them once (figures in docs/testing.md, "Groups"). `npx ava FILE` still runs one file alone
 * (ava.config.mjs).
 */
import base from './ava.config.mjs';

export default {
  ...base,
  files: ['dist/test/groups/unit/*.test.js'],
  workerThreads: true,
};
