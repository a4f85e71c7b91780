/**
 * Worked examples of tasks trained by outside programs (split `example`: in no experiment).
 * `iris-command` is the iris task with the softmax-regression trainer in
 * examples/softmax-trainer.mjs; its evaluation command, examples/softmax-eval.mjs, is declared on
 * the evaluation side (`evaluate.ts`).
 */
import { SUPERVISED_TEST_FRACTION } from './tasks.js';
import { loadIris } from '../../inner/data/index.js';
import { type SupervisedTaskDef, supervisedSpec } from './define.js';
import { standardCatalog } from './catalog.js';

/** Iris trained by an outside softmax-regression program (split `example`). */
export const irisCommand: SupervisedTaskDef = {
  id: 'iris-command',
  title: 'Tell iris species apart, trained by an outside program',
  family: 'iris',
  split: 'example',
  data: 'real',
  description:
    "Predict the species of an iris flower (setosa, versicolor or virginica) from its sepal and petal lengths and widths (Fisher's data). " +
    'Jobs are trained by an outside program, a softmax (multinomial logistic) regression: model.hidden, dropout and the optimiser name are ignored; ' +
    'it uses the dataset mixture, standardisation, label smoothing, the learning rate, batch size, epochs, weight decay and the example budget.',
  metric: 'accuracy',
  testFraction: SUPERVISED_TEST_FRACTION,
  load: loadIris,
  sources: standardCatalog({
    poolSize: 105,
    cleanSize: 24,
    noise: 0.4,
    shiftFeature: 'petal_length',
    shiftWords: 'only flowers with short petals (petal length in the lowest 40%)',
    imbalance: [1, 1, 0.15],
  }),
  // Full-batch gradient descent with a little L2 to convergence: the same softmax regression for every seed.
  baseline: supervisedSpec('iris-command', {
    sources: [{ id: 'noisy-large', weight: 1 }],
    objective: 'cross-entropy',
    validationFraction: 0,
    batchSize: 128,
    learningRate: 0.5,
    weightDecay: 0.01,
    epochs: 280,
    examples: 30_000,
  }),
  maxExamples: 30_000,
  maxWallSeconds: 120,
  trainer: {
    kind: 'command',
    argv: ['node', 'examples/softmax-trainer.mjs'],
    description: 'softmax regression by minibatch gradient descent (examples/softmax-trainer.mjs)',
  },
};

/** The example tasks. */
export const EXAMPLE_TASKS: SupervisedTaskDef[] = [irisCommand];
