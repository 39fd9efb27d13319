import { ScenarioRow, SCENARIOS } from './engine';
import { levelCause } from './causes';

/** One letter per cause on the level panel: memory, the guard's pressure, its refusals, errors, a recovery step. */
const CAUSE_MARK: Record<string, string> = {
  memory: 'M',
  'guard pressure': 'P',
  'guard refusals': 'R',
  errors: 'E',
  recovery: 'S',
  drill: 'D',
  other: '?',
};

const COLORS = ['#7f7f7f', '#1f77b4', '#d62728', '#2ca02c'];

/**
 * A self-contained SVG (no dependencies): stacked panels over time — QPS, the primary's hottest-instance
 * memory %, the container guard's refusals, primary instances in service, the endpoint's `Updating`, the
 * breaker state and the degrade level it published — with one line per scenario; each level change is marked
 * with what moved it (M memory, P the guard's pressure, R its memory refusals, E errors, S a recovery step).
 */
export function renderChart(rows: ScenarioRow[], title: string): string {
  const W = 1000,
    PH = 130,
    GAP = 40,
    LEFT = 70,
    RIGHT = 20,
    TOP = 64;
  const panels: {
    label: string;
    pick: (s: ScenarioRow['result']['series'][number] & { refusedPer10s: number }) => number;
    max?: number;
    lines?: number[];
    only?: string;
    ticks?: string[];
    marks?: boolean;
  }[] = [
    { label: 'requests / s', pick: s => s.qps },
    { label: 'primary memory % (hottest instance)', pick: s => s.memP, max: 100, lines: [80, 95, 100] },
    { label: 'requests refused by the container guard or its backstop, per 10 s', pick: s => s.refusedPer10s },
    { label: 'primary instances in service', pick: s => s.instP },
    { label: 'endpoint Updating', pick: s => s.updating, max: 1, ticks: ['no', 'yes'] },
    { label: 'breaker state', pick: s => s.state, max: 3, only: SCENARIOS.BREAKER, ticks: ['CLOSED', 'DEGRADED', 'OPEN', 'RECOVERING'] },
    {
      label: 'degrade level published (M memory, P guard pressure, R guard refusals, E errors, S recovery step)',
      pick: s => s.level,
      max: 2,
      only: SCENARIOS.BREAKER,
      ticks: ['0 normal', '1 degraded', '2 critical'],
      marks: true,
    },
  ];
  // Refusals per 10-s point from the cumulative count.
  const perTen = rows.map(r => r.result.series.map((s, i, a) => ({ ...s, refusedPer10s: s.refused - (i ? a[i - 1].refused : 0) })));
  const H = TOP + panels.length * (PH + GAP) + 30;
  const tMax = Math.max(1, ...rows.flatMap(r => r.result.series.map(s => s.t)));
  const x = (t: number) => LEFT + ((W - LEFT - RIGHT) * t) / tMax;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${LEFT}" y="22" font-size="16" font-weight="bold">${esc(title)}</text>`);
  rows.forEach((r, i) =>
    out.push(
      `<rect x="${LEFT + (i % 2) * 450}" y="${28 + Math.floor(i / 2) * 14}" width="14" height="4" fill="${COLORS[i % COLORS.length]}"/><text x="${LEFT + 20 + (i % 2) * 450}" y="${34 + Math.floor(i / 2) * 14}">${esc(r.scenario)}</text>`,
    ),
  );
  panels.forEach((p, k) => {
    const top = TOP + k * (PH + GAP) + 10;
    const vals = perTen.flatMap(series => series.map(p.pick));
    const max = p.max ?? Math.max(1, ...vals) * 1.1;
    const y = (v: number) => top + PH - (PH * Math.min(v, max)) / max;
    out.push(`<rect x="${LEFT}" y="${top}" width="${W - LEFT - RIGHT}" height="${PH}" fill="none" stroke="#ccc"/>`);
    out.push(`<text x="${LEFT}" y="${top - 4}" font-weight="bold">${esc(p.label)}</text>`);
    if (p.ticks) p.ticks.forEach((tk, v) => out.push(`<text x="${LEFT - 4}" y="${y(v) + 4}" text-anchor="end" font-size="10">${tk}</text>`));
    else [0, max / 2, max].forEach(v => out.push(`<text x="${LEFT - 4}" y="${y(v) + 4}" text-anchor="end" font-size="10">${Math.round(v)}</text>`));
    for (const l of p.lines ?? []) {
      out.push(
        `<line x1="${LEFT}" x2="${W - RIGHT}" y1="${y(l)}" y2="${y(l)}" stroke="#d62728" stroke-dasharray="4 3" stroke-width="0.8"/><text x="${W - RIGHT - 2}" y="${y(l) - 2}" text-anchor="end" font-size="9" fill="#d62728">${l} %</text>`,
      );
    }
    rows.forEach((r, i) => {
      if (p.only && r.scenario !== p.only) return;
      if (k === 0 && i > 0) return; // the trace is the same for every scenario
      const pts = perTen[i].map(s => `${x(s.t).toFixed(1)},${y(p.pick(s)).toFixed(1)}`).join(' ');
      out.push(`<polyline fill="none" stroke="${k === 0 ? '#333' : COLORS[i % COLORS.length]}" stroke-width="1.2" points="${pts}"/>`);
      if (p.marks) {
        for (const c of r.result.levelChanges) {
          out.push(
            `<line x1="${x(c.t).toFixed(1)}" x2="${x(c.t).toFixed(1)}" y1="${top}" y2="${top + PH}" stroke="#999" stroke-width="0.6"/><text x="${(x(c.t) + 2).toFixed(1)}" y="${top + 10}" font-size="9">${CAUSE_MARK[levelCause(c.why)]}</text>`,
          );
        }
      }
    });
  });
  const axisY = TOP + panels.length * (PH + GAP) + 4;
  for (let m = 0; m <= tMax / 60; m += Math.max(10, Math.ceil(tMax / 60 / 12 / 10) * 10)) {
    out.push(`<text x="${x(m * 60)}" y="${axisY}" text-anchor="middle" font-size="10">${m} min</text>`);
  }
  out.push('</svg>');
  return out.join('\n');
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
