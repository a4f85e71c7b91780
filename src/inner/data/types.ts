/** The data layer's types live in `spec/data.ts` (they pass between steps); re-exported here for the data modules. */
export type { Dataset, FeatureInfo } from '../../spec/data.js';
