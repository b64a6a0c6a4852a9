// mocha's spec reporter plus the plain closing line CI reads: "N passed, N failed".
const Mocha = require('mocha')
const { EVENT_RUN_END } = Mocha.Runner.constants

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options)
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats || {}
      process.stdout.write(`\n${s.passes || 0} passed, ${s.failures || 0} failed\n`)
    })
  }
}
module.exports = SpecWithSummary
