//go:build linux

// Command abigen derives internal/linuxabi from golang.org/x/sys/unix as
// built for Linux: the names and values of the netlink families,
// commands, attributes and errno values the kernel backend
// (kernel/, kernel/kerneltest) encodes and matches. x/sys defines them
// only for GOOS=linux; copied into a package of our own they let the
// backend's message code (and its fakes and tests) build on every
// platform, while only Linux has the sockets to send them on. Run through
// `go generate ./internal/linuxabi` on Linux.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("out", "zlinuxabi.go", "Go file to write")
	flag.Parse()
	b, err := Render()
	if err != nil {
		fmt.Fprintln(os.Stderr, "abigen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "abigen:", err)
		os.Exit(1)
	}
}
