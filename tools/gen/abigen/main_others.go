//go:build !linux

// Command abigen derives internal/linuxabi from golang.org/x/sys/unix,
// which defines those constants only for Linux: run it there.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "abigen: run it on Linux (x/sys/unix defines the netlink constants only for GOOS=linux)")
	os.Exit(1)
}
