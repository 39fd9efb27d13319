import { INVOKE_PAYLOAD_LIMIT_BYTES } from '../../model-server';
import { IReadinessRule, RuleLevel } from '../rule';
const LIMIT = INVOKE_PAYLOAD_LIMIT_BYTES;
const KEYS = ['MMS_MAX_REQUEST_SIZE', 'TS_MAX_REQUEST_SIZE', 'MAX_CONTENT_LENGTH'];
export const RequestSize: IReadinessRule = {
  id: 'RE-RequestSize',
  level: RuleLevel.WARNING,
  what: 'The model server caps request bodies at the real-time payload limit (6 MiB) or less',
  why: "Incident B: a request cap stops one oversized payload from taking a worker's memory; real-time InvokeEndpoint accepts 6 MiB anyway.",
  fix: 'Set modelServer.maxRequestSize to at most Size.mebibytes(6) (the default).',
  check: e =>
    e.variants.flatMap(v =>
      KEYS.filter(k => v.environment[k] !== undefined && Number(v.environment[k]) > LIMIT).map(k => `${v.variantName}: ${k}=${v.environment[k]}`),
    ),
};
