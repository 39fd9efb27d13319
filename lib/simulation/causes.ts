/** What moved the breaker's degrade level, read from its decision log (lib/breaker/policy.ts writes the reasons). */

/** What moved the level. */
export type LevelCause = 'memory' | 'guard pressure' | 'guard refusals' | 'errors' | 'recovery' | 'drill' | 'other';

/** Words for each cause (the table's and the chart's). */
export const LEVEL_CAUSE_NAMES: Record<LevelCause, string> = {
  memory: 'memory',
  'guard pressure': "the guard's pressure",
  'guard refusals': "the guard's memory refusals",
  errors: 'errors the container did not choose',
  recovery: 'a recovery step',
  drill: 'a drill',
  other: 'other',
};

/** The cause of a level change, from the decision log's first reason (lib/breaker/policy.ts writes them). */
export function levelCause(why: string): LevelCause {
  if (/^drill /.test(why)) return 'drill';
  if (/recovery step|^last recovery step/.test(why)) return 'recovery';
  if (/^error rate /.test(why)) return 'errors';
  if (/memory refusals by the container guard/.test(why)) return 'guard refusals';
  if (/guard pressure/.test(why)) return 'guard pressure';
  if (/^memory [\d.]+ % ≥/.test(why)) return 'memory';
  return 'other';
}
