package nvconf

import (
	"fmt"
	"os"
	"sync"
)

// EnvCrashAt names a point of a write flow where the process kills itself
// with SIGKILL, which nothing can catch: the crash tests use it to prove
// that a crash at each step leaves the device recoverable and the backup
// whole (cli/crash_test.go). The points: "backup" (the backup is
// written, the journal not begun), "journal" (begun, nothing written),
// "write:N" (N NV writes or resets done, the next not started). Unset,
// nothing happens; it is no option, and help does not show it.
const EnvCrashAt = "CXRAY_NV_CRASH_AT"

var crash struct {
	once   sync.Once
	at     string
	mu     sync.Mutex
	writes int
}

// crashPoint kills the process when EnvCrashAt names this point; "write"
// counts the device writes.
func crashPoint(step string) {
	crash.once.Do(func() { crash.at = os.Getenv(EnvCrashAt) })
	if crash.at == "" {
		return
	}
	if step == "write" {
		crash.mu.Lock()
		crash.writes++
		step = fmt.Sprintf("write:%d", crash.writes)
		crash.mu.Unlock()
	}
	if step == crash.at {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Kill()
		}
		select {} // the signal is on its way
	}
}
