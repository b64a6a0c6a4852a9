// mocha runs TypeScript through tsx; test/setup.ts starts the embedded Redis and MongoDB once.
// Files run two at a time (MOCHA_JOBS=1: one after another): most of a file's time is spent
// waiting on processes it started, and every file has its own database, queue prefix and ports
// (docs/testing.md, "Running the suite").
const jobs = Number(process.env.MOCHA_JOBS ?? 2)
module.exports = {
  'node-option': ['import=tsx'],
  require: ['test/setup.ts'],
  // SPEC=test/a.test.ts,test/b.test.ts runs just those files.
  spec: process.env.SPEC ? process.env.SPEC.split(',') : ['test/**/*.test.ts'],
  timeout: 60000,
  reporter: 'test/reporter.cjs',
  exit: true,
  ...(jobs > 1 ? { parallel: true, jobs } : {}),
}
