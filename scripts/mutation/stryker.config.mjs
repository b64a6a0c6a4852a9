// Mutation testing (`npm run test:mutation`, not part of `npm test` or CI): Stryker mutates the
// modules whose mistakes cost money or safety and runs the spec files that cover them, against
// the real redis-server and engine that test/setup.ts starts where the tests need them. Stryker's
// command runner runs mocha itself: @stryker-mutator/mocha-runner 9 (the last for Node 20) does not
// load mocha 12's .cjs files nor run mocha's global setup. Each group pairs modules with the few
// spec files that test them, so a mutant costs one short mocha run; MUTATION_GROUP picks the group.
const GROUPS = {
  // Pure code: milliseconds per test, so every mutant runs both files.
  pure: {
    mutate: ['src/invoice/model/money.ts', 'src/flags/engine/rules.ts', 'src/flags/engine/percent-bucket.ts'],
    spec: ['test/invoice-money.test.ts', 'test/flags-rules.test.ts'],
    stores: false,
  },
  'safe-fetch': {
    mutate: ['src/platform/outbound/safe-fetch.ts'],
    spec: ['test/platform-safe-fetch.test.ts'],
    stores: false,
  },
  outbound: {
    mutate: ['src/webhooks/forward/outbound.ts'],
    // The known answers of the rebuild; webhooks-headers/-forward check it end to end but start
    // the whole service, which would make each mutant cost minutes here.
    spec: ['test/webhooks-outbound.test.ts'],
    stores: false,
  },
  quota: {
    mutate: ['src/invoice/store/quota-store.ts'],
    spec: ['test/invoice-limits.test.ts', 'test/invoice-rollover.test.ts'],
    stores: true,
  },
}

const name = process.env.MUTATION_GROUP ?? 'pure'
const group = GROUPS[name]
if (!group) throw new Error(`MUTATION_GROUP must be one of ${Object.keys(GROUPS).join(', ')}`)

export default {
  mutate: group.mutate,
  testRunner: 'command',
  // One node process per mutant (no .mocharc: its node-option would make mocha spawn a second);
  // test/setup.ts (redis-server and the engine) only for groups whose tests use them.
  commandRunner: {
    command: [
      'node --import tsx node_modules/mocha/bin/mocha.js --no-config --timeout 60000 --exit --bail --reporter dot',
      group.stores ? '--require test/setup.ts' : '',
      ...group.spec,
    ].join(' '),
  },
  // The command runner cannot tell which test covers which mutant: every mutant runs the group's files.
  coverageAnalysis: 'off',
  concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 2),
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
}
