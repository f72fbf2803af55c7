package cli

import (
	"context"
	"io"
)

// run is runContext without a deadline, for the tests.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdin, stdout, stderr)
}
