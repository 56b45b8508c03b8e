import test from 'ava';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot, vectorsPath } from '../helpers/vectors';

// The repository keeps its own copy of the published vectors; where the published folder sits
// beside the project (a developer's checkout), the copy must not have drifted from it.
for (const file of ['request-signing.json', 'webhook-signing.json']) {
  test(`test/vectors/${file} is present and matches the published file when that is at hand`, (t) => {
    const ours = fs.readFileSync(vectorsPath(file));
    t.true(ours.length > 0);
    const published = path.resolve(projectRoot(), '..', 'shared', 'vectors', file);
    if (!fs.existsSync(published)) {
      t.log('published vectors not beside the project; only the copy is checked');
      return;
    }
    t.true(ours.equals(fs.readFileSync(published)));
  });
}
