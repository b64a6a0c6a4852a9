// A bar chart in SVG: bar heights are SVG attributes (allowed under the strict CSP, unlike style
// attributes). The numbers are also in a table under a disclosure, for screen readers and for
// anyone who wants the exact counts.
export interface Series {
  name: string
  /** One value per bucket, aligned with `buckets`. */
  values: number[]
}

const W = 640
const H = 180
const PAD_LEFT = 40
const PAD_BOTTOM = 22

export function BarChart(props: { title: string; buckets: string[]; series: Series[]; bucketLabel?: (b: string) => string }) {
  const { buckets, series } = props
  const max = Math.max(1, ...series.flatMap((s) => s.values))
  const plotW = W - PAD_LEFT - 4
  const plotH = H - PAD_BOTTOM - 8
  const groupW = plotW / Math.max(1, buckets.length)
  const barW = Math.max(1, (groupW - 2) / Math.max(1, series.length))
  const label = props.bucketLabel ?? ((b: string) => b)
  const total = series.reduce((a, s) => a + s.values.reduce((x, y) => x + y, 0), 0)
  const every = Math.ceil(buckets.length / 8)
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${props.title}: ${total} in total, at most ${max} per period`} preserveAspectRatio="none">
        <line x1={PAD_LEFT} y1={8 + plotH} x2={W} y2={8 + plotH} class="axis" />
        <text x={PAD_LEFT - 4} y={14} class="tick" text-anchor="end">
          {max}
        </text>
        <text x={PAD_LEFT - 4} y={8 + plotH} class="tick" text-anchor="end">
          0
        </text>
        {buckets.map((b, i) =>
          series.map((s, j) => {
            const v = s.values[i] ?? 0
            const h = (v / max) * plotH
            return <rect key={`${i}-${j}`} class={`bar bar-${j % 4}`} x={PAD_LEFT + i * groupW + 1 + j * barW} y={8 + plotH - h} width={barW} height={h} />
          }),
        )}
        {buckets.map((b, i) =>
          i % every === 0 ? (
            <text key={b} x={PAD_LEFT + i * groupW + groupW / 2} y={H - 6} class="tick" text-anchor="middle">
              {label(b)}
            </text>
          ) : null,
        )}
      </svg>
      <figcaption>
        {props.title}
        {series.length > 1 && (
          <span class="legend">
            {series.map((s, j) => (
              <span key={s.name} class="legend-item">
                <svg width="12" height="12" aria-hidden="true">
                  <rect class={`bar bar-${j % 4}`} width="12" height="12" />
                </svg>
                {s.name}
              </span>
            ))}
          </span>
        )}
      </figcaption>
      <details>
        <summary>Show the numbers</summary>
        <div class="table-wrap" tabIndex={0} role="region" aria-label={`${props.title} as a table`}>
          <table>
            <caption>{props.title}</caption>
            <thead>
              <tr>
                <th scope="col">Period</th>
                {series.map((s) => (
                  <th scope="col" key={s.name}>
                    {s.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {buckets.map((b, i) => (
                <tr key={b}>
                  <th scope="row">{label(b)}</th>
                  {series.map((s) => (
                    <td key={s.name} class="num">
                      {s.values[i] ?? 0}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  )
}
