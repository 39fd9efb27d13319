import { ReadinessRule, RuleLevel } from '../rule';
const LIMIT = 8 * 1024 * 1024;
const KEYS = ['MMS_MAX_REQUEST_SIZE', 'TS_MAX_REQUEST_SIZE'];
export const RequestSize: ReadinessRule = {
  id: 'RE-RequestSize', level: RuleLevel.WARNING,
  what: 'The model server caps request bodies at 8 MiB or less',
  why: 'Incident B: an 8 MB cap stops one oversized payload from taking a worker\'s memory; real-time invoke accepts 6 MB anyway.',
  fix: 'Set modelServer.maxRequestSize to at most Size.mebibytes(8).',
  check: e => e.variants.flatMap(v => KEYS.filter(k => v.environment[k] !== undefined && Number(v.environment[k]) > LIMIT)
    .map(k => `${v.variantName}: ${k}=${v.environment[k]}`)),
};
