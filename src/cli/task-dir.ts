/** The user's task directory (`--task-dir`), registered next to the built-in tasks. */
import { resolve } from 'node:path';
import { defaultTaskDir, registerTaskDir } from '../tasks/file/register.js';

/**
 * Registers the user's task directory: `flag`, else `stored` (the one a resumed run recorded),
 * else ./tasks where it exists. Returns its absolute path, or undefined when there is none.
 */
export async function useTaskDir(flag?: string, stored?: string): Promise<string | undefined> {
  const dir = flag ?? stored ?? defaultTaskDir() ?? undefined;
  if (!dir) return undefined;
  await registerTaskDir(dir);
  return resolve(dir);
}
