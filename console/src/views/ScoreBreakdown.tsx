import { fmt, fmtSigned } from '../ui';

/** One signal's part in a score, as GET /search?explain=true gives it. */
export interface Contribution {
  signal: string;
  kind?: 'relevance' | 'adjustment';
  value: number;
  weight?: number;
  bound?: { min: number; max: number };
  contribution: number;
}

const WHAT: Record<string, string> = {
  lexical: 'keyword match',
  dense: 'meaning match',
  importance: 'importance 1.0 keeps the score, lower takes up to 10% off',
  recency: 'new keeps the score, a month old takes 2.5% off, never more than 5%',
  feedback: 'helpful reports lift up to 20% of the room left, unhelpful take up to 20% off',
};

/** The ranking module's per-signal contributions with each one's weight or bound; the parts sum to the score. */
export function ScoreBreakdown({ id, parts, score }: { id: string; parts: Contribution[]; score: number }) {
  const span = Math.max(0.05, ...parts.map((p) => Math.abs(p.contribution)));
  return (
    <table className="breakdown" aria-label={`Score breakdown of ${id}`}>
      <caption>
        Score breakdown: the parts add up to {fmt(score)}
        <span className="legend">
          Relevance signals add <em>weight × value</em> (their weights share 1); adjustments then move the score within
          their bound. <span className="pos">Green</span> raised it, <span className="neg">red</span> lowered it.
        </span>
      </caption>
      <thead>
        <tr>
          <th scope="col">Signal</th>
          <th scope="col">Value</th>
          <th scope="col">Weight or bound</th>
          <th scope="col">Contribution</th>
          <th scope="col">
            <span className="visually-hidden">Size</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {parts.map((p) => {
          const sign = Math.abs(p.contribution) < 5e-5 ? 'zero' : p.contribution > 0 ? 'pos' : 'neg';
          return (
            <tr key={p.signal}>
              <th scope="row">
                {p.signal}
                {WHAT[p.signal] && <span className="meta signal-what">{WHAT[p.signal]}</span>}
              </th>
              <td>{fmt(p.value)}</td>
              <td>{weightOrBound(p)}</td>
              <td className={sign}>{fmtSigned(p.contribution)}</td>
              <td aria-hidden="true">
                <span className="bar">
                  <span className={`bar-fill ${sign}`} style={barStyle(p.contribution, span)} />
                </span>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function weightOrBound(p: Contribution): string {
  if (p.kind === 'relevance' && p.weight !== undefined)
    return `weight ${fmt(p.weight, 2)} (adds 0 to ${fmt(p.weight, 2)})`;
  if (p.bound) return `can move it ${fmtSigned(p.bound.min)} to ${fmtSigned(p.bound.max)}`;
  return '–';
}

/** A bar from the centre line: right for a raise, left for a cut, its length the share of the largest part. */
function barStyle(contribution: number, span: number): React.CSSProperties {
  const width = `${(Math.min(1, Math.abs(contribution) / span) * 50).toFixed(1)}%`;
  return contribution >= 0 ? { left: '50%', width } : { right: '50%', width };
}
