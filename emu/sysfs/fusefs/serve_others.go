//go:build !linux

package fusefs

import (
	"fmt"

	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/internal/platform"
)

// Off Linux there is no FUSE sysfs to serve: the entries are still
// checked (so a bad one gets its own message), then Serve and ServeTree
// say what needs Linux. The in-process emulator (-d emu) needs none of
// this.

var errServe = &platform.NeedsLinuxError{What: "serving the emulator as sysfs (emu serve, emu run)",
	Why: "it mounts a FUSE file system in a private mount namespace"}

// Server is a mounted file system; off Linux none can be made.
type Server struct{}

// Serve needs Linux (FUSE and mount namespaces).
func Serve(mountpoint string, entries []sysfs.DeviceEntry, opts *sysfs.Options) (*Server, error) {
	if _, err := sysfs.Normalize(entries); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("sysfs: mount on %s: %w", mountpoint, errServe)
}

// ServeTree needs Linux (FUSE and mount namespaces).
func ServeTree(mountpoint string, entries []sysfs.DeviceEntry, opts *sysfs.Options) (*Server, error) {
	return Serve(mountpoint, entries, opts)
}

// Bind needs Linux.
func (s *Server) Bind(part, target string) error { return errServe }

// Detach needs Linux.
func (s *Server) Detach() error { return errServe }

// Unmount needs Linux.
func (s *Server) Unmount() error { return errServe }
