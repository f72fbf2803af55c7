package nvconf

// EnvCrashAt names a point of a write flow where a test build of cxray
// kills itself with SIGKILL, which nothing can catch: the crash tests use
// it to prove that a crash at each step leaves the device recoverable and
// the backup whole (cli/crash_test.go). The points: "backup" (the backup
// is written, the journal not begun), "journal" (begun, nothing written),
// "write:N" (N NV writes or resets done, the next not started).
//
// The hook is compiled only with the build tag cxray_crashhook
// (crash_hook.go); the shipped binary has crashPoint as a no-op
// (crash_off.go) and ignores the variable, so no environment can make it
// kill itself in the middle of an NV write.
const EnvCrashAt = "CXRAY_NV_CRASH_AT"
