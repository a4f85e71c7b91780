/**
 * The one rule for what job code may see of the harness's environment. Job worker threads,
 * command trainers and Slurm jobs all get `jobEnvironment()`: this process's variables without
 * the evaluation secret, the Slurm JWT and anything named like a credential.
 */

/**
 * Secret names: RRL_EVAL_SECRET (and its file's path), SLURM_JWT, any name holding SECRET,
 * PASSWORD, API_KEY or APIKEY, and TOKEN as a word of the name (`HF_TOKEN`, `GH_TOKEN_RO`;
 * not `TOKENIZER_PATH`). Case is ignored.
 */
const SECRET_NAME = /^RRL_EVAL_SECRET(_FILE)?$|^SLURM_JWT$|SECRET|PASSWORD|API_?KEY|(^|_)TOKENS?(_|$)/i;

/** Whether job code is kept from seeing the environment variable `name`. */
export function isSecretEnvName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** A copy of `env` (default: this process's) without secrets, for job code. */
export function jobEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && !isSecretEnvName(name)) out[name] = value;
  return out;
}
