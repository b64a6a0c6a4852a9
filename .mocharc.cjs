// mocha runs TypeScript through tsx; test/setup.ts starts the embedded Redis and MongoDB once.
module.exports = {
  'node-option': ['import=tsx'],
  require: ['test/setup.ts'],
  // SPEC=test/a.test.ts,test/b.test.ts runs just those files.
  spec: process.env.SPEC ? process.env.SPEC.split(',') : ['test/**/*.test.ts'],
  timeout: 60000,
  reporter: 'test/reporter.cjs',
  exit: true,
}
