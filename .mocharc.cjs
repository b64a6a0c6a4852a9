// mocha runs TypeScript through tsx; test/setup.ts starts the embedded Redis and MongoDB once.
// Files run two at a time (MOCHA_JOBS=1: one after another): most of a file's time is spent
// waiting on processes it started, and every file has its own database, queue prefix and ports
// (docs/testing.md, "Running the suite").
const { readdirSync } = require('node:fs')
const jobs = Number(process.env.MOCHA_JOBS ?? 2)

// The longest files start first (in CI, 100–150 s each), so that none of them begins near the end
// and keeps one job running alone: mocha hands files to its jobs in the order listed.
const SLOWEST_FIRST = [
  'embedded-persistence', 'ops-start', 'platform-chaos', 'ops-endpoints', 'docs-examples', 'invoice-faults',
  'ops-pages-offhost', 'platform-redis-sentinel', 'platform-redis-empty', 'platform-redis-cluster-failover',
].map((name) => `test/${name}.test.ts`)
const all = readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`).sort()
const ordered = [...SLOWEST_FIRST.filter((f) => all.includes(f)), ...all.filter((f) => !SLOWEST_FIRST.includes(f))]
module.exports = {
  'node-option': ['import=tsx'],
  require: ['test/setup.ts'],
  // SPEC=test/a.test.ts,test/b.test.ts runs just those files.
  spec: process.env.SPEC ? process.env.SPEC.split(',') : ordered,
  timeout: 60000,
  reporter: 'test/reporter.cjs',
  exit: true,
  ...(jobs > 1 ? { parallel: true, jobs } : {}),
}
