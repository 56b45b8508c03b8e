import * as fs from 'node:fs';
import * as path from 'node:path';

/** Nearest ancestor of `from` holding package.json (the project root, from src or dist). */
export function projectRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** The published test vectors, kept in the repository under test/vectors (CI has nothing else). */
export function vectorsPath(file: string): string {
  return path.join(projectRoot(), 'test', 'vectors', file);
}

export function readSharedVectors<T>(file: string): T {
  return JSON.parse(fs.readFileSync(vectorsPath(file), 'utf8')) as T;
}
