/**
 * The integration files as `npm test` runs them: in the groups that scripts/write-test-groups.mjs
 * writes (several files one after another in one worker, test/helpers/file-group.ts), three groups
 * at a time, the slowest first (the groups' names keep that order). `npx ava FILE` still runs one
 * integration file alone, in its own process (ava.config.mjs).
 */
import base from './ava.config.mjs';

export default {
  ...base,
  files: ['dist/test/groups/integration/*.test.js'],
  sortTestFiles: (a, b) => a.localeCompare(b, [], { numeric: true }),
};
