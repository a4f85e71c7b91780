/**
 * Gymnasium ids as a task may name them. The plain form names an environment Gymnasium has
 * registered: an optional namespace, a name and a version (`CartPole-v1`, `ALE/Pong-v5`,
 * `gymnasium_robotics/FetchReach-v4`). `module:Env-v0` makes `gymnasium.make` import `module`
 * first, which runs whatever code that module holds, so validating a task file from elsewhere
 * would import a module the file names: that form is refused unless the task opts in with
 * `allowImport`. The bridge (python/rrl_gym/bridge.py) applies the same rule on its side.
 */

/** Gymnasium's id grammar without the `module:` prefix (the version is required here). */
const PLAIN = /^(?:[A-Za-z0-9_-]+\/)?[A-Za-z0-9_.-]+-v\d+$/;
/** A dotted Python module name. */
const MODULE = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/** The longest id accepted. */
export const MAX_GYMNASIUM_ID = 128;

/** The module a `module:Env-v0` id makes Gymnasium import, or null for a plain id. */
export function gymnasiumImportModule(id: string): string | null {
  const colon = id.indexOf(':');
  return colon < 0 ? null : id.slice(0, colon);
}

/**
 * Why `id` cannot be used, as a phrase to follow the field's name (null: it can). `optIn` names
 * the setting that allows an import, as the reader would write it (e.g. `environment.allowImport`).
 */
export function gymnasiumIdProblem(id: string, allowImport: boolean, optIn = 'allowImport'): string | null {
  const shown = JSON.stringify(id.slice(0, 80));
  if (id.length > MAX_GYMNASIUM_ID) return `${shown}… is longer than ${MAX_GYMNASIUM_ID} characters`;
  const module = gymnasiumImportModule(id);
  if (module === null) return PLAIN.test(id) ? null : `${shown} is not a Gymnasium id such as "CartPole-v1" or "ALE/Pong-v5"`;
  if (!MODULE.test(module) || !PLAIN.test(id.slice(module.length + 1))) {
    return `${shown} is not a Gymnasium id such as "CartPole-v1" (or "package.module:Env-v0" with ${optIn})`;
  }
  return allowImport === true ? null : `${shown} names a module to import (${module}); set ${optIn} to true to allow it`;
}
