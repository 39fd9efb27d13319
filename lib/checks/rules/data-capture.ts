import { IReadinessRule, RuleLevel } from '../rule';
export const DataCapture: IReadinessRule = {
  id: 'RE-DataCapture',
  level: RuleLevel.WARNING,
  what: 'Data capture is on with an integer sampling of 1–100 % into an S3 destination',
  why: 'Without captured requests the long-tail inputs that caused incident A cannot be replayed; sampling above a few % costs memory.',
  fix: 'Keep dataCapture on at 1 % (the default).',
  check: e => {
    const d = e.dataCapture;
    if (!d || !d.enabled) return ['data capture is off'];
    const s = d.sampling;
    if (typeof s === 'number' && (!Number.isInteger(s) || s < 1 || s > 100)) return [`sampling ${s} is not an integer from 1 to 100`];
    return d.destination ? [] : ['no capture destination'];
  },
};
