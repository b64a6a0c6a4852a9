// mocha's spec reporter plus the plain closing line CI reads: "N passed, N failed".
// Before that line it lists the slowest test files (hooks included), so a run that creeps towards
// the suite's time budget (docs/testing.md) says where the time went.
const Mocha = require('mocha')
const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options)
    const started = new Map()
    const perFile = new Map()
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file && !started.has(suite.file)) started.set(suite.file, Date.now())
    })
    runner.on(EVENT_SUITE_END, (suite) => {
      // A file's top-level suites end one by one; the last end wins.
      if (suite.file && started.has(suite.file)) perFile.set(suite.file, Date.now() - started.get(suite.file))
    })
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats || {}
      const slowest = [...perFile.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15)
      if (slowest.length > 1) {
        process.stdout.write(`\n  slowest files (of ${perFile.size}, ${Math.round((s.duration || 0) / 1000)} s in all):\n`)
        for (const [file, ms] of slowest) {
          process.stdout.write(`    ${(ms / 1000).toFixed(1).padStart(6)} s  ${file.replace(process.cwd() + '/', '')}\n`)
        }
      }
      process.stdout.write(`\n${s.passes || 0} passed, ${s.failures || 0} failed\n`)
    })
  }
}
module.exports = SpecWithSummary
