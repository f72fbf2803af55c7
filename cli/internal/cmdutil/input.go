package cmdutil

import (
	"io"
	"os"
)

// ReadInput reads a file that a command takes as input, or standard input
// for "-", refusing more than limit bytes (what names the kind of file in
// the message): no input cxray reads is near its limit, and a wrong file
// must not be read whole into memory.
func ReadInput(path string, stdin io.Reader, limit int64, what string) ([]byte, error) {
	if path == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, limit+1))
		if err != nil {
			return nil, UsageErr("standard input: %v", err)
		}
		if int64(len(b)) > limit {
			return nil, UsageErr("standard input holds more than %d bytes; %s is at most that: is it the right input?", limit, what)
		}
		return b, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, UsageErr("%v", err)
	}
	if fi.Size() > limit {
		return nil, UsageErr("%s is %d bytes; %s is at most %d: is it the right file?", path, fi.Size(), what, limit)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, UsageErr("%v", err)
	}
	return b, nil
}
