// mocha's spec reporter plus the plain closing line CI reads: "N passed, N failed".
// Before that line it lists the slowest test files, so a run that creeps towards the suite's time
// budget (docs/testing.md) says where the time went. A file's time is the sum of its tests' and
// hooks' durations: in parallel mode a file's events arrive all at once when it ends, so
// timestamps taken here would say nothing.
const Mocha = require('mocha')
const { EVENT_HOOK_END, EVENT_RUN_END, EVENT_TEST_FAIL, EVENT_TEST_PASS } = Mocha.Runner.constants

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options)
    const perFile = new Map()
    const add = (r) => {
      if (r && r.file && typeof r.duration === 'number') perFile.set(r.file, (perFile.get(r.file) || 0) + r.duration)
    }
    runner.on(EVENT_HOOK_END, add)
    runner.on(EVENT_TEST_PASS, add)
    runner.on(EVENT_TEST_FAIL, add)
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats || {}
      const slowest = [...perFile.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15)
      if (slowest.length > 1) {
        const busy = [...perFile.values()].reduce((a, b) => a + b, 0)
        process.stdout.write(`\n  slowest files (of ${perFile.size}; ${Math.round(busy / 1000)} s of tests and hooks, ${Math.round((s.duration || 0) / 1000)} s by the clock):\n`)
        for (const [file, ms] of slowest) {
          process.stdout.write(`    ${(ms / 1000).toFixed(1).padStart(6)} s  ${file.replace(process.cwd() + '/', '')}\n`)
        }
      }
      process.stdout.write(`\n${s.passes || 0} passed, ${s.failures || 0} failed\n`)
    })
  }
}
module.exports = SpecWithSummary
