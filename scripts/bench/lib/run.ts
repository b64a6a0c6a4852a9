// Run a benchmark's main and exit: 0 when it finished, 1 with the error printed. Exiting
// explicitly ends whatever connections and timers a failed run left open.
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err)
      process.exit(1)
    },
  )
}
