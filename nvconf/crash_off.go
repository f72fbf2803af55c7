//go:build !cxray_crashhook

package nvconf

// CrashHook says whether this build has the crash hook (EnvCrashAt): not
// this one, the shipped one.
const CrashHook = false

// crashPoint does nothing in a shipped build (see EnvCrashAt).
func crashPoint(string) {}
