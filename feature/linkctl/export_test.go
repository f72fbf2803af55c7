package linkctl

// SetAfterWrite installs the hook Apply calls after each write (nil: none).
func SetAfterWrite(f func(step int)) { afterWrite = f }
