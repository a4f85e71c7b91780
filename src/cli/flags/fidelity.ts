/** `--fidelity`, `--eta` and `--min-share`: successive halving within each group (`rrl train`, `rrl experiment transfer`). */
import { InvalidArgumentError } from 'commander';
import { ASHA_DEFAULTS, type FidelityConfig, rungShares } from '../../outer/fidelity.js';
import { type FlagValues, flagTable } from './table.js';
import { int, share } from './parse.js';

/** The successive-halving flags; `what` names the groups they halve, e.g. `the run`. */
export function fidelityFlags(what: string) {
  return flagTable({
    fidelity: {
      flag: '--fidelity <mode>',
      help:
        `none | asha: successive halving within each group of ${what} (every proposal first trains on --min-share of its budget, ` +
        'the best 1/eta go on at eta× the budget, up to the full budget; control rung jobs also stop when their training curve stays flat)',
      default: 'none',
    },
    eta: {
      flag: '--eta <n>',
      help: 'asha: promotion factor (the top 1/eta of a rung go on at eta× the budget)',
      parse: int(2, 16),
      default: ASHA_DEFAULTS.eta,
    },
    minShare: { flag: '--min-share <fraction>', help: 'asha: share of the budget at the lowest rung, e.g. 1/9', parse: share, default: ASHA_DEFAULTS.minShare },
  });
}

/** The values of the successive-halving flags. */
export type FidelityFlags = FlagValues<ReturnType<typeof fidelityFlags>>;

/** The successive-halving setting of `--fidelity`, `--eta` and `--min-share` (undefined: off). */
export function fidelityFrom(o: FidelityFlags): FidelityConfig | undefined {
  if (o.fidelity !== 'none' && o.fidelity !== 'asha') throw new InvalidArgumentError(`--fidelity must be none or asha, got "${o.fidelity}"`);
  if (o.fidelity === 'none') return undefined;
  const f: FidelityConfig = { mode: 'asha', eta: o.eta, minShare: o.minShare };
  if (rungShares(f).length < 2) throw new InvalidArgumentError(`--min-share ${o.minShare} leaves a single rung: successive halving needs a share below 1`);
  return f;
}
