//go:build !linux && !windows

package osmac

import (
	"context"

	"github.com/cxray/cxray/internal/platform"
)

// System lists this machine's interfaces on Linux and Windows only; here
// it returns an error matching errors.ErrUnsupported. A listing brought
// from a host (ipconfig /all, Get-NetAdapter, ip link) still goes through
// Parse.
func System(ctx context.Context) (*Listing, error) {
	return nil, &platform.NeedsLinuxError{What: "reading this machine's MAC addresses",
		Why:     "cxray asks Linux's sysfs and rtnetlink, or Windows' IP Helper",
		Instead: "give the MAC check a listing from the adapter's host instead ('ip link', 'ipconfig /all' or 'Get-NetAdapter' output)"}
}
