import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The folder holding package.json: works from src/ (tsx, vitest) and from dist/src/ alike. */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir)
      throw new Error(
        'adops: cannot find the package root (package.json) above ' + fileURLToPath(import.meta.url),
      );
    dir = up;
  }
  root = dir;
  return dir;
}

/** The shipped sql/ folder of numbered migrations. */
export function sqlDir(): string {
  return join(packageRoot(), 'sql');
}
