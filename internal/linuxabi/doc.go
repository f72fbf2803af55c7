// Package linuxabi holds the Linux user-space ABI values the kernel
// backend puts in and looks for in netlink messages (generic netlink
// control, devlink, ethtool, rtnetlink attributes; errno values), under
// their golang.org/x/sys/unix names. x/sys/unix defines them only when
// building for Linux; this copy, derived from it by tools/gen/abigen,
// lets the message code and its fakes (kernel/kerneltest) build and be
// tested on every platform. Only Linux has sockets to send them on.
package linuxabi

//go:generate go run ../../tools/gen/abigen -out zlinuxabi.go
